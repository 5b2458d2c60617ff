import { ChatRepository, type MessageRow } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { SsrfGuard, toOpusVoiceNote } from '@gw/platform';
import {
  ErrorCode,
  RpcError,
  type ChatPresenceRequest,
  type HistoryOnDemandRequest,
  type OutboundContent,
  type ProtoAttachment,
  type SendRequest,
} from '@gw/contracts';
import { contentField, unwrapMessage, type ProtoMessage } from '@gw/domain';
import { BufferJSON, proto, type AnyMessageContent, type BinaryNode, type WAMessage, type WAMessageKey, type WASocket } from '@whiskeysockets/baileys';
import type { DataSource } from 'typeorm';
import type { InstanceOpHandler } from '../bus/session-rpc.server';
import type { Session } from '../session/session';
import { MediaSource } from './media-source';
import type { SimulatorSeam } from '../config/session-worker.config';
import { networkOptions } from '../socket/network-options';
import { FileRepository, InstanceRepository } from '@gw/persistence';
import { downloadMediaMessage, getContentType, jidNormalizedUser, normalizeMessageContent, prepareWAMessageMedia } from '@whiskeysockets/baileys';
import { SendLedger } from './send-ledger';
import { AwaitedAcks } from './awaited-acks';
import { refusalText } from './refusal';

/** How long a send waits for the server's ack before answering with the message still Pending. */
const ACK_TIMEOUT_MS = 15_000;
const MAX_DELAY_MS = 300_000;

export interface OutboundOptions {
  dataSource: DataSource;
  logger: Logger;
  ssrf: SsrfGuard;
  /** The simulator seam (its media server is self-signed), when active. */
  simulator?: SimulatorSeam;
  /**
   * Told, before it is asked, which message an exact reload (`history.request` mode `exact`) asks the
   * phone to resend on this socket: its answer is then announced as `history`, not as a new message.
   */
  expectResend?: (instanceId: string, socket: WASocket, messageId: string) => { requested(requestId: string): void; failed(): void } | undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The `send` and `chat.presence` ops of the worker: a message is reserved in the store under the
 * lease, marked relayed just before it goes out, relayed through Baileys, and answered once the server
 * acked it (Sent) or refused it (Failed). A message id that was relayed once is never relayed again.
 */
export function createOutboundOps(options: OutboundOptions): { ops: Record<string, InstanceOpHandler>; close(): Promise<void> } {
  const ledger = new SendLedger(options.dataSource);
  const media = new MediaSource(options.dataSource, options.ssrf);

  const send = async (session: Session, raw: Record<string, unknown>): Promise<unknown> => {
    const request = raw as unknown as SendRequest;
    if (!request?.messageId || !request.recordId || !request.chatJid || !request.content) throw new RpcError(ErrorCode.BadRequest, 'malformed send request');
    const socket = session.openSocket();
    const owner = (socket.user?.id ?? '').split(':')[0].split('@')[0];
    // A status goes to the recipients WhatsApp knows; checked before anything is stored.
    const audience = request.status ? await statusAudience(socket, request.status.recipients) : null;
    if (request.content.kind === 'media' || (request.content.kind === 'proto' && request.content.attachments?.length)) {
      // An upload is not repeated for an id that went out before.
      const before = await ledger.relayedBefore(request.instanceId, request.messageId);
      if (before) return SendLedger.record(before, owner);
    }

    const built = await build(socket, request);
    // Stored only once the message could be built (a missing quote stores nothing), and marked relayed
    // in the same statement unless a typing delay comes first.
    const typing = Boolean(request.delayMs && request.delayMs > 0 && !request.status);
    const { alreadyRelayed } = await ledger.reserve(session.lease, request, owner, !typing);
    if (alreadyRelayed) return SendLedger.record(alreadyRelayed, owner);
    if (typing) {
      // Any audio (ptt, myaudio or a plain audio file) shows "recording…"; everything else "typing…".
      const presence = request.content.kind === 'media' && (request.content.ptt || request.content.mediaType === 'audio') ? 'recording' : 'composing';
      await socket.sendPresenceUpdate(presence, request.chatJid).catch(() => undefined);
      await sleep(Math.min(request.delayMs ?? 0, MAX_DELAY_MS));
      await socket.sendPresenceUpdate('paused', request.chatJid).catch(() => undefined);
    }

    const ack = waitForAck(socket, request.messageId);
    if (typing)
      await ledger.markRelayed(session.lease, request).catch((error: unknown) => {
        ack.cancel();
        throw error;
      });
    try {
      if (built.kind === 'proto') {
        await socket.relayMessage(request.chatJid, built.message, { messageId: request.messageId, additionalNodes: built.nodes });
        // sendMessage announces our own message as an `append` upsert; relayMessage does not. Do the
        // same, so the stored row gets its raw copy (poll votes need the secret) and its event.
        const own = {
          key: { remoteJid: request.chatJid, fromMe: true, id: request.messageId },
          message: built.message,
          messageTimestamp: Math.floor(Date.now() / 1000),
          status: proto.WebMessageInfo.Status.PENDING,
        } as WAMessage;
        const upsert = (socket as unknown as { upsertMessage?: (message: WAMessage, type: 'append') => Promise<void> }).upsertMessage;
        if (upsert) await upsert(own, 'append').catch((error: unknown) => options.logger.warn({ err: error }, 'announcing a relayed message failed'));
      } else {
        const statusOptions =
          request.status && audience
            ? {
                statusJidList: audience.recipients,
                // Baileys reads a colour only as hex text ("AARRGGBB"); a number is dropped.
                ...(request.status.backgroundArgb !== undefined
                  ? { backgroundColor: (request.status.backgroundArgb >>> 0).toString(16).padStart(8, '0') }
                  : {}),
                ...(request.status.font ? { font: request.status.font } : {}),
              }
            : {};
        await socket.sendMessage(request.chatJid, built.content, { messageId: request.messageId, quoted: built.quoted, ...statusOptions });
      }
    } catch (error) {
      ack.cancel();
      const row = await ledger.result(session.lease, request, { status: 'Failed', error: `failed to send: ${(error as Error).message}` });
      return SendLedger.record(row, owner);
    }
    const outcome = await ack.result;
    let row: MessageRow;
    if (outcome === 'timeout') {
      row = (await ledger.rawMessage(request.instanceId, request.messageId))!.row;
    } else {
      try {
        row = await ledger.result(session.lease, request, outcome.error ? { status: 'Failed', error: outcome.error } : { status: 'Sent' });
      } finally {
        AwaitedAcks.delete(socket, request.messageId);
      }
    }
    if ((request.readMessages || request.readChat) && !request.status)
      await markRead(socket, request).catch((error: unknown) => options.logger.warn({ err: error }, 'marking read after send failed'));
    return audience
      ? { ...SendLedger.record(row, owner), statusRecipients: audience.recipients, statusDiscarded: audience.discarded }
      : SendLedger.record(row, owner);
  };

  /** History on demand (`history`) or a placeholder resend (`exact`): a peer data operation to the phone. */
  const historyRequest = async (session: Session, raw: Record<string, unknown>): Promise<unknown> => {
    const request = raw as unknown as HistoryOnDemandRequest;
    const key = request?.key;
    if (!key?.id || !key.remoteJid || (request.mode !== 'history' && request.mode !== 'exact'))
      throw new RpcError(ErrorCode.BadRequest, 'malformed history request');
    const socket = session.openSocket();
    if (request.mode === 'history') {
      const count = Math.min(Math.max(Math.trunc(Number(request.count) || 1), 1), 100);
      return { requestId: await socket.fetchMessageHistory(count, key, Number(request.timestampMs) || Date.now()) };
    }
    const expected = options.expectResend?.(request.instanceId, socket, key.id);
    let requestId: string | undefined;
    try {
      requestId = await socket.requestPlaceholderResend(key);
    } catch (error) {
      expected?.failed();
      throw error;
    }
    expected?.requested(requestId && requestId !== 'RESOLVED' ? requestId : '');
    // 'RESOLVED': the message arrived while the request waited; undefined: the same message was asked already.
    return { requestId: requestId ?? '' };
  };

  const chatPresence = async (session: Session, raw: Record<string, unknown>): Promise<unknown> => {
    const request = raw as unknown as ChatPresenceRequest;
    const socket = session.openSocket();
    await socket.sendPresenceUpdate(request.presence, request.chatJid);
    if (request.presence !== 'paused' && request.delayMs > 0) {
      // The presence lasts the delay, then stops, as the phone would.
      setTimeout(() => void socket.sendPresenceUpdate('paused', request.chatJid).catch(() => undefined), Math.min(request.delayMs, MAX_DELAY_MS)).unref();
    }
    return { ok: true };
  };

  /** Content for Baileys, with the quoted message and the context flags. */
  async function build(
    socket: WASocket,
    request: SendRequest,
  ): Promise<{ kind: 'content'; content: AnyMessageContent; quoted?: WAMessage } | { kind: 'proto'; message: proto.IMessage; nodes?: BinaryNode[] }> {
    const content = request.content;
    if (content.kind === 'pin' && request.chatJid.endsWith('@g.us')) await assertMayPin(socket, request.chatJid);
    const quoted = request.quotedId ? await storedMessage(request.instanceId, request.quotedId) : undefined;
    if (request.quotedId && !quoted) throw new RpcError(ErrorCode.NotFound, 'replied message not found');
    let mentions = request.mentions ?? [];
    if (request.mentionAll && request.chatJid.endsWith('@g.us')) {
      const metadata = await socket.groupMetadata(request.chatJid);
      mentions = metadata.participants.map((participant) => participant.id);
    }
    if (content.kind === 'proto') {
      const message = structuredClone(content.message);
      for (const attachment of content.attachments ?? []) await attach(socket, request.instanceId, message, attachment);
      // relayMessage sends the message as built: the reply, mentions and forward flag go in its context here.
      withContext(message as proto.IMessage, request.chatJid, socket.user?.id ?? '', { quoted, mentions, forwarded: request.forwarded === true });
      return { kind: 'proto', message: proto.Message.fromObject(message), nodes: content.nodes as BinaryNode[] | undefined };
    }
    const context = request.forwarded ? { contextInfo: { isForwarded: true, forwardingScore: 1 } } : {};
    return { kind: 'content', content: await toBaileysContent(request.instanceId, content, mentions, context, socket), quoted };
  }

  async function toBaileysContent(
    instanceId: string,
    content: Exclude<OutboundContent, { kind: 'proto' }>,
    mentions: string[],
    context: Record<string, unknown>,
    socket: WASocket,
  ): Promise<AnyMessageContent> {
    const withMentions = mentions.length ? { mentions } : {};
    switch (content.kind) {
      case 'text':
        return {
          text: content.text,
          ...withMentions,
          ...context,
          linkPreview: content.linkPreview
            ? {
                'canonical-url': content.linkPreview.url,
                'matched-text': content.linkPreview.matchedText,
                title: content.linkPreview.title,
                description: content.linkPreview.description || undefined,
                jpegThumbnail: content.linkPreview.thumbnailBase64 ? Buffer.from(content.linkPreview.thumbnailBase64, 'base64') : undefined,
                ...(content.linkPreview.large && content.linkPreview.image ? await largePreviewImage(socket, instanceId, content.linkPreview.image) : {}),
              }
            : null,
        } as AnyMessageContent;
      case 'media': {
        const file = await media.load(instanceId, content.source);
        const mimetype = content.mimetype || file.mimetype;
        const thumbnail = content.thumbnailBase64 ? { jpegThumbnail: content.thumbnailBase64 } : {};
        const common = { ...withMentions, ...context, ...(content.viewOnce ? { viewOnce: true } : {}) };
        switch (content.mediaType) {
          case 'image':
            return { image: file.data, caption: content.caption, mimetype, ...thumbnail, ...common } as AnyMessageContent;
          case 'video':
            return {
              video: file.data,
              caption: content.caption,
              mimetype,
              gifPlayback: content.gifPlayback,
              ptv: content.ptv,
              ...thumbnail,
              ...common,
            } as AnyMessageContent;
          case 'audio': {
            // A voice note must be Opus in Ogg; anything else is converted first.
            const isOpus = /ogg|opus/i.test(mimetype) && file.data.subarray(0, 4).toString() === 'OggS';
            const data =
              content.ptt && !isOpus
                ? await toOpusVoiceNote(file.data).catch((error: Error) => {
                    throw new RpcError(ErrorCode.BadRequest, `audio could not be converted to a voice note: ${error.message}`);
                  })
                : file.data;
            return {
              audio: data,
              ptt: content.ptt,
              mimetype: content.ptt ? 'audio/ogg; codecs=opus' : mimetype || 'audio/mpeg',
              ...common,
            } as AnyMessageContent;
          }
          case 'document':
            return {
              document: file.data,
              mimetype,
              fileName: content.fileName || file.fileName,
              caption: content.caption,
              ...thumbnail,
              ...common,
            } as AnyMessageContent;
          case 'sticker':
            return { sticker: file.data, mimetype: mimetype || 'image/webp', ...common } as AnyMessageContent;
        }
        throw new RpcError(ErrorCode.BadRequest, 'unknown media type');
      }
      case 'contacts':
        return { contacts: { displayName: content.displayName, contacts: content.vcards.map((vcard) => ({ vcard })) }, ...context } as AnyMessageContent;
      case 'location':
        return {
          location: {
            degreesLatitude: content.latitude,
            degreesLongitude: content.longitude,
            name: content.name || undefined,
            address: content.address || undefined,
          },
          ...context,
        } as AnyMessageContent;
      case 'reaction':
        return { react: { text: content.emoji, key: await targetKey(instanceId, content.targetMessageId) } };
      case 'edit':
        return { text: content.text, edit: await targetKey(instanceId, content.targetMessageId) };
      case 'delete':
        return { delete: await targetKey(instanceId, content.targetMessageId) };
      case 'pin':
        return {
          pin: await targetKey(instanceId, content.targetMessageId),
          type: content.pin ? proto.PinInChat.Type.PIN_FOR_ALL : proto.PinInChat.Type.UNPIN_FOR_ALL,
          time: content.pin ? content.durationSeconds : undefined,
        } as AnyMessageContent;
    }
  }

  /**
   * A large link preview: the image is uploaded as a link thumbnail (what Baileys' generateHighQualityLinkPreview
   * does) and the message carries its reference; the small inline thumbnail is made from the same image.
   */
  async function largePreviewImage(
    socket: WASocket,
    instanceId: string,
    source: { url: string } | { fileId: string },
  ): Promise<{ jpegThumbnail?: Buffer; highQualityThumbnail: proto.Message.IImageMessage }> {
    const file = await media.load(instanceId, source);
    const { imageMessage } = await prepareWAMessageMedia(
      { image: file.data, mimetype: file.mimetype.startsWith('image/') ? file.mimetype : 'image/jpeg' },
      { upload: socket.waUploadToServer, mediaTypeOverride: 'thumbnail-link' },
    );
    if (!imageMessage) throw new RpcError(ErrorCode.BadRequest, 'the link preview image could not be prepared');
    return { jpegThumbnail: imageMessage.jpegThumbnail ? Buffer.from(imageMessage.jpegThumbnail) : undefined, highQualityThumbnail: imageMessage };
  }

  /** Uploads a header's file (like any media send) and puts it in the header the path leads to. */
  async function attach(socket: WASocket, instanceId: string, message: Record<string, unknown>, attachment: ProtoAttachment): Promise<void> {
    const file = await media.load(instanceId, attachment.source);
    const mimetype = attachment.mimetype || file.mimetype;
    const prepared = await prepareWAMessageMedia({ [attachment.mediaType]: file.data, mimetype, fileName: attachment.fileName || file.fileName } as never, {
      upload: socket.waUploadToServer,
    });
    let header: Record<string, unknown> = message;
    for (const step of attachment.path) {
      const next = (header as Record<string | number, unknown>)[step];
      if (next === undefined || next === null) (header as Record<string | number, unknown>)[step] = {};
      header = (header as Record<string | number, unknown>)[step] as Record<string, unknown>;
    }
    const field = `${attachment.mediaType}Message`;
    header[field] = (prepared as unknown as Record<string, unknown>)[field];
    header.hasMediaAttachment = true;
  }

  async function storedMessage(instanceId: string, id: string): Promise<WAMessage | undefined> {
    const found = await ledger.rawMessage(instanceId, id);
    if (!found) return undefined;
    if (found.raw) return JSON.parse(found.raw, BufferJSON.reviver) as WAMessage;
    // No raw copy (e.g. a message only queued): enough of a key and text to quote it.
    return { key: keyOf(found.row), message: { conversation: found.row.text } } as WAMessage;
  }

  async function targetKey(instanceId: string, id: string): Promise<WAMessageKey> {
    const found = await ledger.rawMessage(instanceId, id);
    if (!found) throw new RpcError(ErrorCode.NotFound, 'Message not found');
    return keyOf(found.row);
  }

  async function markRead(socket: WASocket, request: SendRequest): Promise<void> {
    const received = await ledger.lastReceived(request.instanceId, request.chatJid, 10);
    if (received.length) {
      await socket.readMessages(
        received.map((entry) => ({ remoteJid: request.chatJid, id: entry.messageId, fromMe: false, participant: entry.isGroup ? entry.sender : undefined })),
      );
    }
    if (request.readChat) await new ChatRepository(options.dataSource).markRead(request.instanceId, request.chatJid);
  }

  const read = async (session: Session, raw: Record<string, unknown>): Promise<unknown> => {
    const keys = (raw.keys ?? []) as Array<{ remoteJid: string; id: string; participant?: string }>;
    if (!Array.isArray(keys) || keys.length === 0) throw new RpcError(ErrorCode.BadRequest, 'no messages to mark read');
    await session.openSocket().readMessages(keys.map((key) => ({ ...key, fromMe: false })));
    return { ok: true };
  };

  const files = new FileRepository(options.dataSource);
  const instances = new InstanceRepository(options.dataSource);
  const downloadMedia = async (session: Session, raw: Record<string, unknown>): Promise<unknown> => {
    const messageId = String(raw.messageId ?? '');
    const found = await ledger.rawMessage(session.instanceId, messageId);
    if (!found) throw new RpcError(ErrorCode.NotFound, 'Message not found');
    if (!found.raw) throw new RpcError(ErrorCode.BadRequest, 'this message has no downloadable media');
    const message = JSON.parse(found.raw, BufferJSON.reviver) as WAMessage;
    const socket = session.openSocket();
    const row = await instances.findById(session.instanceId);
    const network = networkOptions(row?.proxy ?? null, options.simulator);
    let data: Buffer;
    try {
      data = (await downloadMediaMessage(message, 'buffer', { options: network.options } as never, {
        reuploadRequest: socket.updateMediaMessage,
        logger: options.logger as never,
      })) as Buffer;
    } catch (error) {
      throw new RpcError(ErrorCode.BadRequest, `media could not be downloaded: ${(error as Error).message}`);
    }
    const inner = describeMedia(message);
    const fileId = await files.store(session.instanceId, data, inner.mimetype, inner.fileName, Number(raw.ttlMs) || 7 * 86_400_000);
    return { fileId, mimetype: inner.mimetype, fileName: inner.fileName, size: data.length };
  };

  return { ops: { send, 'chat.presence': chatPresence, read, 'media.download': downloadMedia, 'history.request': historyRequest }, close: () => media.close() };
}

/** The recipients of a status that are on WhatsApp (one batched query); the others with the reason. */
async function statusAudience(socket: WASocket, jids: string[]): Promise<{ recipients: string[]; discarded: Array<{ input: string; reason: string }> }> {
  const unique = [...new Set(jids)];
  if (unique.length === 0) throw new RpcError(ErrorCode.BadRequest, 'no valid recipients for the status');
  const found = (await socket.onWhatsApp(...unique)) ?? [];
  const known = new Set(found.filter((entry) => entry.exists).map((entry) => jidNormalizedUser(entry.jid)));
  const recipients = unique.filter((jid) => known.has(jidNormalizedUser(jid)));
  const discarded = unique.filter((jid) => !known.has(jidNormalizedUser(jid))).map((jid) => ({ input: jid, reason: 'not_on_whatsapp' }));
  if (recipients.length === 0)
    throw new RpcError(ErrorCode.BadRequest, `no valid recipients for the status: ${discarded.map((entry) => entry.input).join(', ')} not on WhatsApp`);
  return { recipients, discarded };
}

/** In a group, pinning follows the group's own setting: when only admins edit it, only admins pin. */
async function assertMayPin(socket: WASocket, groupJid: string): Promise<void> {
  const metadata = await socket.groupMetadata(groupJid);
  if (!metadata.restrict) return;
  const me = [socket.user?.id, socket.user?.lid].filter(Boolean).map((jid) => (jid as string).split(':')[0].split('@')[0]);
  const self = metadata.participants.find((participant) =>
    [participant.id, participant.lid, participant.phoneNumber].some((jid) => jid && me.includes(jid.split(':')[0].split('@')[0])),
  );
  if (!self?.admin) throw new RpcError(ErrorCode.BadRequest, 'in this group only admins may pin messages');
}

/**
 * Puts a reply (the quoted message, its id and author), mentions and the forward flag in the context of
 * a built message's content (inside its view-once/ephemeral envelopes), as sendMessage does for the
 * contents it builds itself.
 */
export function withContext(
  message: proto.IMessage,
  chatJid: string,
  selfJid: string,
  extra: { quoted?: WAMessage; mentions: string[]; forwarded: boolean },
): void {
  if (!extra.quoted && extra.mentions.length === 0 && !extra.forwarded) return;
  const inner = normalizeMessageContent(message);
  const field = inner ? getContentType(inner) : undefined;
  const body = field ? (inner as Record<string, unknown>)[field] : undefined;
  if (!body || typeof body !== 'object') return;
  const target = body as { contextInfo?: proto.IContextInfo | null };
  const context: proto.IContextInfo = { ...(target.contextInfo ?? {}) };
  if (extra.quoted?.key?.id) {
    const key = extra.quoted.key;
    const quotedInner = normalizeMessageContent(extra.quoted.message ?? undefined);
    const quotedField = quotedInner ? getContentType(quotedInner) : undefined;
    if (quotedInner && quotedField) {
      // Only the quoted content itself, without its own context (no nested replies).
      const quotedBody = (quotedInner as Record<string, unknown>)[quotedField];
      const copy = quotedBody && typeof quotedBody === 'object' ? { ...(quotedBody as Record<string, unknown>) } : quotedBody;
      if (copy && typeof copy === 'object') delete (copy as { contextInfo?: unknown }).contextInfo;
      context.quotedMessage = { [quotedField]: copy } as proto.IMessage;
    }
    context.stanzaId = key.id;
    const author = key.fromMe ? selfJid : key.participant || key.remoteJid || '';
    if (author) context.participant = jidNormalizedUser(author);
    if (key.remoteJid && key.remoteJid !== chatJid) context.remoteJid = key.remoteJid;
  }
  if (extra.mentions.length) context.mentionedJid = extra.mentions;
  if (extra.forwarded) {
    context.isForwarded = true;
    context.forwardingScore = Math.max(context.forwardingScore ?? 0, 1);
  }
  target.contextInfo = context;
}

/** Mimetype and file name of the media inside a message (through its envelopes). */
function describeMedia(message: WAMessage): { mimetype: string; fileName: string } {
  const content = unwrapMessage(message.message as ProtoMessage);
  const inner = (content[contentField(content)] ?? {}) as { mimetype?: string | null; fileName?: string | null };
  return { mimetype: inner.mimetype || 'application/octet-stream', fileName: inner.fileName || '' };
}

function keyOf(row: MessageRow): WAMessageKey {
  return { remoteJid: row.chatId, fromMe: row.fromMe, id: row.messageId, participant: row.isGroup && !row.fromMe ? row.sender : undefined };
}

/** The server's `<ack class="message" id=…>` for one message: error attribute → Failed. */
function waitForAck(socket: WASocket, messageId: string): { result: Promise<'timeout' | { error: string | null }>; cancel(): void } {
  const ws = socket.ws as unknown as { on(event: string, fn: (node: BinaryNode) => void): void; off(event: string, fn: (node: BinaryNode) => void): void };
  let finish: (value: 'timeout' | { error: string | null }) => void = () => undefined;
  const result = new Promise<'timeout' | { error: string | null }>((resolve) => (finish = resolve));
  const listener = (node: BinaryNode) => {
    if (node.attrs.id !== messageId) return;
    const error = node.attrs.error;
    done(error ? { error: refusalText(error) } : { error: null });
  };
  const timer = setTimeout(() => done('timeout'), ACK_TIMEOUT_MS);
  const done = (value: 'timeout' | { error: string | null }) => {
    clearTimeout(timer);
    ws.off('CB:ack,class:message', listener);
    // Given up: a late ack is the inbound handler's to record. (An ack received stays ours until
    // the send has written its result; the send then releases the id.)
    if (value === 'timeout') AwaitedAcks.delete(socket, messageId);
    finish(value);
  };
  AwaitedAcks.add(socket, messageId);
  ws.on('CB:ack,class:message', listener);
  return { result, cancel: () => done('timeout') };
}
