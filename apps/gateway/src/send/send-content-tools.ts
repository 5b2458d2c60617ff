import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { checkMediaBytes, parseChatTarget, resolveChatPlaceholders, type DeclaredMediaKind } from '@gw/domain';
import { ChatRepository, FileRepository } from '@gw/persistence';
import { SsrfGuard } from '@gw/platform';
import { ApiError } from '../common/api-error';
import type { GatewayConfig } from '../runtime/gateway-config';
import { GATEWAY_CONFIG } from '../runtime/tokens';
import { INVALID_NUMBER } from './dto/field-rules';
import { LinkPreviewBuilder } from './link-preview';
import type { RequestInstance } from '../common/request-instance';

/** Staged uploads live long enough for a queued send to pick them up. */
const STAGED_FILE_TTL_MS = 7 * 24 * 3_600_000;

/** The chat JID of `number`, or a 400 naming what is wrong (the DTOs check it first; the campaigns' bodies are no DTO). */
export function chatTarget(number: string | undefined, missingMessage = 'missing number'): string {
  if (!number || !number.trim()) throw ApiError.badRequest(missingMessage);
  const parsed = parseChatTarget(number);
  if (!parsed) throw ApiError.badRequest(INVALID_NUMBER);
  return parsed.jid;
}

/** What the content builders need besides the request: placeholders, staged uploads and their links, link previews. */
export interface ContentTools {
  readonly previews: LinkPreviewBuilder;
  /** Replaces placeholders with what is known of the chat and its lead. */
  placeholders(instance: RequestInstance, chatJid: string, text: string): Promise<string>;
  /** Stages a base64 upload; answers the staged file's id. `kind`: the media kind the send claims, checked against the bytes. */
  stageFile(instance: RequestInstance, base64: string, mimetype: string, fileName: string, kind?: DeclaredMediaKind): Promise<string>;
  /** Where a staged upload can be fetched. */
  fileLink(fileId: string): string;
}

@Injectable()
export class SendContentTools implements ContentTools, OnModuleDestroy {
  readonly previews: LinkPreviewBuilder;
  private readonly publicBaseUrl: string;

  constructor(
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly chats: ChatRepository,
    private readonly files: FileRepository,
  ) {
    this.publicBaseUrl = config.publicBaseUrl.replace(/\/$/, '');
    this.previews = new LinkPreviewBuilder(new SsrfGuard(config.ssrfAllowlist));
  }

  async onModuleDestroy(): Promise<void> {
    await this.previews.close();
  }

  /** Shared with the dispatcher, which resolves async sends when they go out. */
  placeholders(instance: RequestInstance, chatJid: string, text: string): Promise<string> {
    return resolveChatPlaceholders(this.chats, instance, chatJid, text);
  }

  /** A base64 upload is staged in Postgres; the worker reads it from there (the bus is not for megabytes). */
  async stageFile(instance: RequestInstance, base64: string, mimetype: string, fileName: string, kind?: DeclaredMediaKind): Promise<string> {
    const clean = base64.replace(/^data:([^;,]+)?(;base64)?,/, '');
    // A search for one bad character, not an anchored ^[…]+$ (its backtracking stack grows with megabytes; see isBase64).
    if (!clean || /[^A-Za-z0-9+/=\s]/.test(clean)) throw ApiError.badRequest('file must be a URL or base64');
    const data = Buffer.from(clean, 'base64');
    if (data.length === 0) throw ApiError.badRequest('file is empty');
    // Refused before it is stored (the worker checks again what it loads, URLs included).
    const checked = kind ? checkMediaBytes(kind, data, mimetype) : null;
    if (checked && !checked.ok) throw ApiError.badRequest(checked.error);
    return this.files.store(instance.id, data, checked?.mimetype ?? sniffMimetype(data) ?? mimetype, fileName, STAGED_FILE_TTL_MS);
  }

  /** Deletes an upload staged for one synchronous operation once it is done (it would otherwise be kept 7 days). */
  async discardFile(instance: RequestInstance, fileId: string): Promise<void> {
    await this.files.delete(fileId, instance.id).catch(() => undefined);
  }

  /** `GET /files/<id>` (no token: the id is the capability), as long as the upload is kept. */
  fileLink(fileId: string): string {
    return `${this.publicBaseUrl}/files/${fileId}`;
  }
}

/** The type the bytes themselves declare (base64 carries no type unless it is a data URI). */
export function sniffMimetype(data: Buffer): string | null {
  const hex = data.subarray(0, 12).toString('hex');
  if (hex.startsWith('89504e47')) return 'image/png';
  if (hex.startsWith('ffd8ff')) return 'image/jpeg';
  if (hex.startsWith('47494638')) return 'image/gif';
  if (hex.startsWith('52494646') && data.subarray(8, 12).toString() === 'WEBP') return 'image/webp';
  if (hex.startsWith('25504446')) return 'application/pdf';
  if (data.subarray(4, 8).toString() === 'ftyp') return 'video/mp4';
  if (hex.startsWith('4f676753')) return 'audio/ogg';
  return null;
}
