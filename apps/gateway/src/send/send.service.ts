import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { OutboundContent, SendRequest } from '@gw/contracts';
import { resolveChatPlaceholders } from '@gw/dispatch';
import { parseChatTarget } from '@gw/domain';
import { ChatRepository, FileRepository, type InstanceEntity } from '@gw/persistence';
import { SsrfGuard } from '@gw/platform';
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { ApiError } from '../common/api-error';
import { normaliseMessageId } from '../common/message-id';
import type { GatewayConfig } from '../runtime/gateway-config';
import { DATA_SOURCE, GATEWAY_CONFIG } from '../runtime/tokens';
import { AsyncQueueService } from '../message/async/async-queue.service';
import { SessionClient } from '../session/session.client';
import type { SendCommonDto } from './dto/send-common.dto';
import { LinkPreviewBuilder } from './link-preview';
import { withoutInlineMedia } from './send-payload';

/** Staged uploads live long enough for a queued send to pick them up. */
const STAGED_FILE_TTL_MS = 7 * 24 * 3_600_000;

/**
 * What a refused send answers, per endpoint (the spec's Errors: "failed to send location", "failed to
 * send payment request"; the others as the upstream API names them), followed by WhatsApp's reason.
 * Text and media keep WhatsApp's own reason alone, as the upstream API does.
 */
const FAILURE_BY_FUNCTION: Record<string, string> = {
  SendLocationButton: 'failed to send location',
  SendLocationMessage: 'failed to send location',
  SendRequestPayment: 'failed to send payment request',
  SendPixButton: 'failed to send PIX button',
  SendMenuMessage: 'failed to send menu',
  SendCarouselMessage: 'failed to send carousel',
  SendContactMessage: 'failed to send contact card',
};

/**
 * Random bytes for ids, drawn 4 KiB at a time: one `randomBytes` per id cost ~4% of an async
 * accept's CPU (bench/queue). Each byte is used once.
 */
const idBytes = { pool: Buffer.alloc(0), used: 0 };
function takeRandom(count: number): Buffer {
  if (idBytes.used + count > idBytes.pool.length) {
    idBytes.pool = randomBytes(4096);
    idBytes.used = 0;
  }
  idBytes.used += count;
  return idBytes.pool.subarray(idBytes.used - count, idBytes.used);
}

export function newMessageIds(): { recordId: string; messageId: string } {
  return { recordId: `r${takeRandom(4).toString('hex').slice(0, 7)}`, messageId: `3EB0${takeRandom(9).toString('hex').toUpperCase()}` };
}

/**
 * What every send endpoint shares: the target, the common fields, placeholders, ids fixed at accept,
 * and the request to the worker holding the instance. Endpoints only build their content.
 */
@Injectable()
export class SendService implements OnModuleDestroy {
  readonly previews: LinkPreviewBuilder;
  private readonly chats: ChatRepository;
  private readonly files: FileRepository;
  private readonly publicBaseUrl: string;

  constructor(
    @Inject(DATA_SOURCE) dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    private readonly sessions: SessionClient,
    private readonly asyncQueue: AsyncQueueService,
  ) {
    this.publicBaseUrl = config.publicBaseUrl.replace(/\/$/, '');
    this.previews = new LinkPreviewBuilder(new SsrfGuard(config.ssrfAllowlist));
    this.chats = new ChatRepository(dataSource);
    this.files = new FileRepository(dataSource);
  }

  async onModuleDestroy(): Promise<void> {
    await this.previews.close();
  }

  /** The chat JID of `number`, or a 400 naming what is wrong. */
  target(number: string | undefined, missingMessage = 'missing number'): string {
    if (!number || !number.trim()) throw ApiError.badRequest(missingMessage);
    const parsed = parseChatTarget(number);
    if (!parsed) throw ApiError.badRequest('Invalid number: give an international phone number or a JID (@s.whatsapp.net, @lid, @g.us, @newsletter)');
    return parsed.jid;
  }

  /** Replaces placeholders with what is known of the chat and its lead (shared with the dispatcher, which resolves async sends when they go out). */
  async placeholders(instance: InstanceEntity, chatJid: string, text: string): Promise<string> {
    return resolveChatPlaceholders(this.chats, instance, chatJid, text);
  }

  /** A base64 upload is staged in Postgres; the worker reads it from there (the bus is not for megabytes). */
  async stageFile(instance: InstanceEntity, base64: string, mimetype: string, fileName: string): Promise<string> {
    const clean = base64.replace(/^data:([^;,]+)?(;base64)?,/, '');
    if (!/^[A-Za-z0-9+/=\s]+$/.test(clean)) throw ApiError.badRequest('file must be a URL or base64');
    const data = Buffer.from(clean, 'base64');
    if (data.length === 0) throw ApiError.badRequest('file is empty');
    return this.files.store(instance.id, data, sniffMimetype(data) ?? mimetype, fileName, STAGED_FILE_TTL_MS);
  }

  /** Where a staged upload can be fetched: `GET /files/<id>` (no token: the id is the capability), as long as it is kept. */
  fileLink(fileId: string): string {
    return `${this.publicBaseUrl}/files/${fileId}`;
  }

  /** Sends through the worker and answers the Message record plus `response`. */
  async send(
    instance: InstanceEntity,
    common: SendCommonDto,
    chatJid: string,
    content: OutboundContent,
    sendFunction: string,
    payload: Record<string, unknown>,
    responseExtra: Record<string, unknown> = {},
    /** Request fields of one kind of send (a status' recipients). */
    extra: Pick<SendRequest, 'status'> = {},
  ) {
    const ids = newMessageIds();
    const mentions =
      common.mentions && common.mentions.trim() !== 'all'
        ? common.mentions
            .split(',')
            .map((entry) => entry.trim())
            .filter(Boolean)
        : [];
    const mentionJids = mentions.map((entry) => {
      const parsed = parseChatTarget(entry);
      if (!parsed || parsed.kind === 'group' || parsed.kind === 'newsletter') throw ApiError.badRequest(`mentions: "${entry}" is not a phone number`);
      return parsed.jid;
    });
    const request: SendRequest = {
      instanceId: instance.id,
      ...ids,
      chatJid,
      content,
      quotedId: common.replyid?.trim() ? normaliseMessageId(common.replyid) : undefined,
      mentions: mentionJids,
      mentionAll: common.mentions?.trim() === 'all',
      forwarded: common.forward === true,
      delayMs: common.delay ?? 0,
      readChat: common.readchat === true,
      readMessages: common.readmessages === true,
      // The media's link (response.fileUrl) is also the record's fileURL.
      record: {
        sendFunction,
        sendPayload: withoutInlineMedia(payload),
        trackSource: common.track_source ?? '',
        trackId: common.track_id ?? '',
        sendFolderId: '',
        fileUrl: typeof responseExtra.fileUrl === 'string' ? responseExtra.fileUrl : '',
      },
      ...extra,
    };
    if (common.async) {
      // Durable before the 200 (messages row `Queued` + queue row); the dispatcher sends it, paced.
      const queued = await this.asyncQueue.enqueue(instance, request);
      return { ...queued, response: { status: 'success', message: 'Message queued successfully', ...responseExtra } };
    }
    const timeoutMs = 30_000 + (request.delayMs ?? 0);
    const record = (await this.sessions.request(instance.id, 'send', request, timeoutMs)) as Record<string, unknown>;
    if (record.status === 'Failed') throw ApiError.refused(record, FAILURE_BY_FUNCTION[sendFunction]);
    return { ...record, response: { status: 'success', message: 'Message sent successfully', ...responseExtra } };
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
