import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  buildButtonMenu,
  buildListMenu,
  buildPixButton,
  buildPoll,
  checkMediaBytes,
  isPixKeyType,
  parseButtons,
  parseList,
  parsePoll,
  type DeclaredMediaKind,
} from '@gw/domain';
import { type QuickReplyFileChange, type QuickReplyRow, type QuickReplyUpload, QuickReplyRepository } from '@gw/persistence';
import { RpcError } from '@gw/contracts';
import { ApiError, rpcErrorKind, rpcErrorMessage } from '../common/api-error';
import { validateBody } from '../common/validation';
import { SessionClient } from '../session/session.client';
import { buildContactContent, buildLocationContent } from '../send/content-builders';
import type { SendContactDto, SendLocationDto } from '../send/dto/send-common.dto';
import { INVALID_KEY_TYPE } from '../send/interactive/interactive.dto';
import { built } from '../send/interactive/menu-content';
import { SendContentTools, sniffMimetype } from '../send/send-content-tools';
import type { QuickReplyEditDto } from './dto/quick-reply-edit.dto';
import { QUICK_REPLY_MESSAGE_TYPES, QuickReplyMessageDto, type QuickReplyMediaDto, type QuickReplyMessage } from './dto/quick-reply-message.dto';
import type { QuickReplyEditedResponse, QuickReplyResponse } from './dto/quick-reply.response';
import type { RequestInstance } from '../common/request-instance';

const MB = 1024 * 1024;
/** The most a base64 file of each stored kind may weigh (seed "Limits"), and of all of an instance's replies together. */
export const QUICK_REPLY_FILE_LIMITS: Record<Exclude<DeclaredMediaKind, 'sticker'>, number> = {
  image: 5 * MB,
  audio: 16 * MB,
  video: 16 * MB,
  document: 20 * MB,
};
export const QUICK_REPLY_INSTANCE_LIMIT = 50 * MB;
/** What the WhatsApp Business app takes: a shortcut of up to 25 characters, a text of up to 1024. */
export const WHATSAPP_SHORTCUT_MAX = 25;
export const WHATSAPP_TEXT_MAX = 1024;
/** How long `showall` waits for the phone's quick replies before answering what is stored. */
const PHONE_SYNC_TIMEOUT_MS = 5_000;

/** uazapiGO 2.1.1: a local reply is not converted into a WhatsApp one; a new one is created there instead. */
export const NOT_CONVERTIBLE = 'cannot convert an existing local quick reply into a WhatsApp one: to create it on WhatsApp, send onWhatsApp: true without id';
/** uazapiGO 2.1.1's 500 "falha ao sincronizar com WhatsApp", before the cause. */
const SYNC_FAILED = 'failed to sync the quick reply with WhatsApp';

const megabytes = (bytes: number) => `${(bytes / MB).toFixed(1).replace(/\.0$/, '')} MB`;
const invalid = (message: string) => new ApiError('validation_failed', message);

/** A message to store: the message without a base64 file, and the upload that replaces it. */
interface PreparedMessage {
  message: Record<string, unknown>;
  upload: QuickReplyUpload | null;
  /** The message names the reply's own stored file (its /files link, sent back on an update). */
  keepsStoredFile: boolean;
}

/**
 * Quick replies: stored per instance, never applied automatically. Those of the WhatsApp Business app
 * (the phone's app state) are synced in as the phone changes them (the worker follows WhatsApp's
 * server_sync of their collection) and again whenever `showall` runs while the instance is connected: they
 * show `onWhatsApp: true`. As uazapiGO 2.1.1's (2.1.0 refused them with a 403), every reply on WhatsApp is
 * edited and deleted here and the phone follows; it stays a text reply (`type: text` only). A text reply made
 * here with `onWhatsApp: true` (and no `id`) is written to the phone too; an existing local reply is never
 * converted into a WhatsApp one (2.1.1 refuses it). A failed write to the phone answers uazapi 2.1.1's
 * "failed to sync with WhatsApp" with the status of its cause. Each kind's message is checked by
 * its send endpoint's rules (the DTOs, then what the send path's builders check), so a stored reply
 * is one that could be sent. A base64 file is stored (per-kind and per-instance limits) and its record
 * shows the link /files serves it at, as a send's staged upload is linked.
 */
@Injectable()
export class QuickReplyService {
  constructor(
    private readonly quickReplies: QuickReplyRepository,
    private readonly tools: SendContentTools,
    private readonly sessions: SessionClient,
  ) {}

  /** `POST /quickreply/edit`: create (no id), update (an id) or delete (`delete: true`). */
  async edit(instance: RequestInstance, dto: QuickReplyEditDto): Promise<QuickReplyEditedResponse> {
    const id = dto.id?.trim() ?? '';
    if (dto.delete === true) {
      if (!id) throw invalid('missing id: give the id of the quick reply to delete');
      const current = await this.writable(instance, id);
      // Off the phone first: a reply WhatsApp keeps is never left there without its record here.
      if (current.waId) await this.offPhone(instance, current.waId);
      await this.quickReplies.delete(instance.id, id);
      return { message: 'Quick reply deleted', quickReplies: await this.stored(instance) };
    }
    const message = await this.messageOf(dto);
    const values = { shortCut: dto.shortCut.trim(), aiDescription: dto.aiDescription ?? '', message: {} as Record<string, unknown> };
    if (!id) {
      const prepared = this.prepare(message, null);
      const waId = dto.onWhatsApp === true ? await this.toPhone(instance, values.shortCut, message, null) : null;
      const created = await this.quickReplies
        .create(instance.id, { ...values, message: prepared.message, waId }, prepared.upload, QUICK_REPLY_INSTANCE_LIMIT)
        .catch(async (error: unknown) => {
          // Not stored here: not left on the phone either.
          if (waId) await this.sessions.request(instance.id, 'quickreply.remove', { instanceId: instance.id, waId }).catch(() => undefined);
          throw error;
        });
      if ('overLimit' in created) throw this.overInstanceLimit(created.used, prepared.upload);
      return { message: 'Quick reply created', quickReply: this.record(created, instance), quickReplies: await this.stored(instance) };
    }
    const current = await this.writable(instance, id);
    if (dto.onWhatsApp === true && !current.waId) throw invalid(NOT_CONVERTIBLE);
    const prepared = this.prepare(message, current);
    let waId: string | null | undefined;
    if (current.waId && dto.onWhatsApp !== false) waId = await this.toPhone(instance, values.shortCut, message, current.waId);
    else if (current.waId) {
      await this.offPhone(instance, current.waId);
      waId = null;
    }
    const file: QuickReplyFileChange = prepared.keepsStoredFile
      ? { action: 'keep' }
      : prepared.upload
        ? { action: 'replace', upload: prepared.upload }
        : { action: 'none' };
    const updated = await this.quickReplies.update(instance.id, id, { ...values, message: prepared.message, waId }, file, QUICK_REPLY_INSTANCE_LIMIT);
    if (!updated) throw this.notFound(id);
    if ('overLimit' in updated) throw this.overInstanceLimit(updated.used, prepared.upload);
    return { message: 'Quick reply updated', quickReply: this.record(updated, instance), quickReplies: await this.stored(instance) };
  }

  /** `GET /quickreply/showall`: the instance's replies, oldest first, the phone's Business quick replies synced in first when it can be asked. */
  async showAll(instance: RequestInstance): Promise<QuickReplyResponse[]> {
    await this.syncFromPhone(instance);
    return this.stored(instance);
  }

  private async stored(instance: RequestInstance): Promise<QuickReplyResponse[]> {
    return (await this.quickReplies.list(instance.id)).map((row) => this.record(row, instance));
  }

  /**
   * The phone's quick replies into the store. Without a session, before the app-state key arrived
   * (history sync) or when the phone is slow, what is stored is answered as it is.
   */
  private async syncFromPhone(instance: RequestInstance): Promise<void> {
    let read: { quickReplies: Array<{ waId: string; shortcut: string; message: string }> } | null;
    try {
      read = await this.sessions.requestIfHeld(instance.id, 'quickreply.read', { instanceId: instance.id }, PHONE_SYNC_TIMEOUT_MS);
    } catch (error) {
      // The phone could not be read now (no session yet, history sync, WhatsApp refused, a worker bug): the stored list still answers.
      if (error instanceof RpcError) return;
      throw error;
    }
    if (!read) return;
    await this.quickReplies.syncFromWhatsApp(
      instance.id,
      read.quickReplies.map((reply) => ({ waId: reply.waId, shortCut: reply.shortcut, text: reply.message })),
    );
  }

  /** Writes a text reply to the phone's Business quick replies (a new one when `waId` is null); answers its WhatsApp id. */
  private async toPhone(instance: RequestInstance, shortCut: string, message: QuickReplyMessage, waId: string | null): Promise<string> {
    if (message.kind !== 'text') throw invalid('onWhatsApp applies to text quick replies only: the WhatsApp Business app keeps text replies');
    if (shortCut.length > WHATSAPP_SHORTCUT_MAX) throw invalid(`shortCut must be at most ${WHATSAPP_SHORTCUT_MAX} characters to be on WhatsApp`);
    if (!message.text?.trim() || message.text.length > WHATSAPP_TEXT_MAX) throw invalid(`text must be 1 to ${WHATSAPP_TEXT_MAX} characters to be on WhatsApp`);
    const saved = await this.synced(
      this.sessions.request(instance.id, 'quickreply.save', { instanceId: instance.id, ...(waId ? { waId } : {}), shortcut: shortCut, message: message.text }),
    );
    return saved.waId;
  }

  /** Takes a reply off the phone's Business quick replies. */
  private async offPhone(instance: RequestInstance, waId: string): Promise<void> {
    await this.synced(this.sessions.request(instance.id, 'quickreply.remove', { instanceId: instance.id, waId }));
  }

  /** A write to the phone; its failure is uazapi 2.1.1's "failed to sync with WhatsApp", with the status its cause has in the catalogue (no session 409, refused 502…). */
  private async synced<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      throw new ApiError(rpcErrorKind(error.code), `${SYNC_FAILED}: ${rpcErrorMessage(error.code, error.message)}`);
    }
  }

  /** `GET /quick-replies/{id}`. */
  async get(instance: RequestInstance, id: string): Promise<QuickReplyResponse> {
    const row = await this.quickReplies.find(instance.id, id);
    if (!row) throw this.notFound(id);
    return this.record(row, instance);
  }

  private record(row: QuickReplyRow, instance: RequestInstance): QuickReplyResponse {
    const message = row.fileId ? { ...row.message, file: this.tools.fileLink(row.fileId) } : row.message;
    const field = (name: string) => (typeof message[name] === 'string' ? (message[name] as string) : '');
    const createdAt = row.createdAt.toISOString();
    const updatedAt = row.updatedAt.toISOString();
    return {
      id: row.id,
      shortCut: row.shortCut,
      aiDescription: row.aiDescription,
      onWhatsApp: row.onWhatsApp,
      message,
      createdAt,
      updatedAt,
      type: message.kind === 'media' ? field('type') : field('kind'),
      text: field('text'),
      file: message.kind === 'media' ? field('file') : '',
      docName: message.kind === 'media' ? field('docName') : '',
      owner: instance.owner ?? '',
      created: createdAt,
      updated: updatedAt,
    };
  }

  /** The instance's reply `id` (one synced from WhatsApp too: uazapiGO 2.1.1 edits and deletes those, the phone following). */
  private async writable(instance: RequestInstance, id: string): Promise<QuickReplyRow> {
    const row = await this.quickReplies.find(instance.id, id);
    if (!row) throw this.notFound(id);
    return row;
  }

  private notFound(id: string): ApiError {
    return new ApiError('quick_reply_not_found', `Quick reply not found: ${id}`);
  }

  /** `message`, or uazapi's flat form (`type` with `text`, `file`, `docName`) read as a text or media message by the same rules. */
  private async messageOf(dto: QuickReplyEditDto): Promise<QuickReplyMessage> {
    if (dto.message) return dto.message;
    if (!dto.type) throw invalid('missing message: give message with its kind (text, media, contact, location, menu, pix), or type');
    const plain =
      dto.type === 'text'
        ? { kind: 'text', text: dto.text }
        : {
            kind: 'media',
            type: dto.type,
            file: dto.file,
            ...(dto.text !== undefined ? { text: dto.text } : {}),
            ...(dto.docName !== undefined ? { docName: dto.docName } : {}),
          };
    const type = QUICK_REPLY_MESSAGE_TYPES.find((entry) => entry.name === plain.kind)?.value ?? QuickReplyMessageDto;
    return (await validateBody(type as new () => QuickReplyMessage, plain)) as QuickReplyMessage;
  }

  /** Checks what the DTO rules cannot (as the send path's builders do) and takes a base64 file out of the message. */
  private prepare(dto: QuickReplyMessage, current: QuickReplyRow | null): PreparedMessage {
    const message = { ...dto } as Record<string, unknown>;
    switch (dto.kind) {
      case 'contact':
        buildContactContent({ ...dto, number: '' } as SendContactDto);
        break;
      case 'location':
        buildLocationContent({ ...dto, number: '' } as SendLocationDto);
        break;
      case 'menu':
        checkMenu(dto);
        break;
      case 'pix': {
        const pixType = dto.pixType.trim().toUpperCase();
        if (!isPixKeyType(pixType)) throw invalid(INVALID_KEY_TYPE);
        built(() => buildPixButton({ pixType, pixKey: dto.pixKey.trim(), pixName: dto.pixName?.trim() || 'Pix', text: dto.text }));
        message.pixType = pixType;
        break;
      }
      case 'media':
        return this.prepareMedia(dto, message, current);
      case 'text':
        break;
    }
    return { message, upload: null, keepsStoredFile: false };
  }

  /** A URL is kept as sent (the reply's own /files link keeps its stored file); base64 is checked, measured and taken out to be stored. */
  private prepareMedia(dto: QuickReplyMediaDto, message: Record<string, unknown>, current: QuickReplyRow | null): PreparedMessage {
    const file = dto.file.trim();
    if (current?.fileId && file === this.tools.fileLink(current.fileId)) {
      delete message.file;
      return { message, upload: null, keepsStoredFile: true };
    }
    if (/^https?:\/\//i.test(file)) return { message: { ...message, file }, upload: null, keepsStoredFile: false };
    const kind: keyof typeof QUICK_REPLY_FILE_LIMITS = dto.type === 'ptt' || dto.type === 'myaudio' ? 'audio' : dto.type;
    const declared = /^data:([^;,]+)/.exec(file)?.[1] ?? '';
    const clean = file.replace(/^data:([^;,]+)?(;base64)?,/, '');
    // A search for one bad character, not an anchored ^[…]+$: V8's backtracking stack for that grows with a
    // file of megabytes and overflowed deep in a long-running process (a 500; see isBase64 in @gw/domain).
    if (!clean || /[^A-Za-z0-9+/=\s]/.test(clean)) throw invalid('file must be a URL or base64');
    const data = Buffer.from(clean, 'base64');
    if (data.length === 0) throw invalid('file is empty');
    const limit = QUICK_REPLY_FILE_LIMITS[kind];
    if (data.length > limit)
      throw invalid(
        `file is too large: a quick reply's ${kind} may be at most ${megabytes(limit)} (this one is ${megabytes(data.length)}); give a URL instead`,
      );
    const checked = checkMediaBytes(kind, data, declared);
    if (!checked.ok) throw invalid(checked.error);
    delete message.file;
    return {
      message,
      upload: { data, mimetype: checked.mimetype || sniffMimetype(data) || 'application/octet-stream', fileName: dto.docName ?? '' },
      keepsStoredFile: false,
    };
  }

  private overInstanceLimit(used: number, upload: QuickReplyUpload | null): ApiError {
    const size = upload?.data.length ?? 0;
    return invalid(
      `file is too large: an instance's quick replies may store at most ${megabytes(QUICK_REPLY_INSTANCE_LIMIT)} of files ` +
        `(${megabytes(used)} stored, this one is ${megabytes(size)}); give a URL instead, or delete a reply`,
    );
  }
}

/** A menu that could be sent: the choices parsed and the message built as /send/menu builds it; a button image only by URL. */
function checkMenu(dto: Extract<QuickReplyMessage, { kind: 'menu' }>): void {
  const footer = dto.footerText ?? '';
  switch (dto.type) {
    case 'poll':
      built(() => buildPoll(dto.text, parsePoll(dto.choices), dto.selectableCount ?? 1, randomBytes(32).toString('base64')));
      return;
    case 'list':
      built(() => buildListMenu(dto.text, parseList(dto.choices), dto.listButton ?? '', footer));
      return;
    case 'button_legacy': {
      const other = built(() => parseButtons(dto.choices)).find((button) => button.kind !== 'reply');
      if (other) throw invalid(`button_legacy takes reply buttons only ("${other.text}" is a ${other.kind} button)`);
      return;
    }
    case 'button':
      built(() => buildButtonMenu(dto.text, parseButtons(dto.choices), footer));
      if (dto.imageButton?.trim() && !/^https?:\/\//i.test(dto.imageButton.trim()))
        throw invalid('imageButton must be an http(s) URL: a quick reply keeps button images only by URL');
  }
}
