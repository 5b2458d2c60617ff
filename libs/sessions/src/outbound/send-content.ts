import { ErrorCode, RpcError, type OutboundContent, type ProtoAttachment, type SendRequest } from '@gw/contracts';
import { checkMediaBytes, type DeclaredMediaKind } from '@gw/domain';
import type { MessageRow } from '@gw/persistence';
import { toOpusVoiceNote } from '@gw/platform';
import {
  BufferJSON,
  getContentType,
  jidNormalizedUser,
  normalizeMessageContent,
  prepareWAMessageMedia,
  proto,
  type AnyMessageContent,
  type BinaryNode,
  type WAMessage,
  type WAMessageKey,
  type WASocket,
} from '@whiskeysockets/baileys';
import type { MediaSource } from './media-source';
import { GROUP_NOT_FOUND, isUnknownGroup } from './refusal';
import type { SendLedger } from './send-ledger';

/** What a send relays: content for sendMessage (with the quoted message), or a built proto for relayMessage. */
export type BuiltSend = { kind: 'content'; content: AnyMessageContent; quoted?: WAMessage } | { kind: 'proto'; message: proto.IMessage; nodes?: BinaryNode[] };

/**
 * Builds a send's message from its request: files loaded (and uploaded for proto headers), the quoted
 * and target messages looked up in the store, mentions and the forward flag put in its context.
 */
export class SendContentBuilder {
  constructor(
    private readonly ledger: SendLedger,
    private readonly media: MediaSource,
  ) {}

  /** Content for Baileys, with the quoted message and the context flags. */
  async build(socket: WASocket, request: SendRequest): Promise<BuiltSend> {
    const content = request.content;
    if (content.kind === 'pin' && request.chatJid.endsWith('@g.us')) await assertMayPin(socket, request.chatJid);
    const quoted = request.quotedId ? await this.storedMessage(request.instanceId, request.quotedId) : undefined;
    if (request.quotedId && !quoted) throw new RpcError(ErrorCode.NotFound, 'replied message not found');
    let mentions = request.mentions ?? [];
    if (request.mentionAll && request.chatJid.endsWith('@g.us')) {
      const metadata = await groupMetadata(socket, request.chatJid);
      mentions = metadata.participants.map((participant) => participant.id);
    }
    if (content.kind === 'proto') {
      const message = structuredClone(content.message);
      for (const attachment of content.attachments ?? []) await this.attach(socket, request.instanceId, message, attachment);
      // relayMessage sends the message as built: the reply, mentions and forward flag go in its context here.
      withContext(message as proto.IMessage, request.chatJid, socket.user?.id ?? '', { quoted, mentions, forwarded: request.forwarded === true });
      return { kind: 'proto', message: proto.Message.fromObject(message), nodes: content.nodes };
    }
    const context = request.forwarded ? { contextInfo: { isForwarded: true, forwardingScore: 1 } } : {};
    return { kind: 'content', content: await this.toBaileysContent(request.instanceId, content, mentions, context, socket), quoted };
  }

  private async toBaileysContent(
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
                ...(content.linkPreview.large && content.linkPreview.image ? await this.largePreviewImage(socket, instanceId, content.linkPreview.image) : {}),
              }
            : null,
        } as AnyMessageContent;
      case 'media': {
        const file = await this.media.load(instanceId, content.source);
        const mimetype = realMimetype(content.mediaType, file.data, content.mimetype || file.mimetype);
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
        return { react: { text: content.emoji, key: await this.targetKey(instanceId, content.targetMessageId) } };
      case 'edit':
        return { text: content.text, edit: await this.targetKey(instanceId, content.targetMessageId) };
      case 'delete':
        return { delete: await this.targetKey(instanceId, content.targetMessageId) };
      case 'pin':
        return {
          pin: await this.targetKey(instanceId, content.targetMessageId),
          type: content.pin ? proto.PinInChat.Type.PIN_FOR_ALL : proto.PinInChat.Type.UNPIN_FOR_ALL,
          time: content.pin ? content.durationSeconds : undefined,
        } as AnyMessageContent;
    }
  }

  /**
   * A large link preview: the image is uploaded as a link thumbnail (what Baileys' generateHighQualityLinkPreview
   * does) and the message carries its reference; the small inline thumbnail is made from the same image.
   */
  private async largePreviewImage(
    socket: WASocket,
    instanceId: string,
    source: { url: string } | { fileId: string },
  ): Promise<{ jpegThumbnail?: Buffer; highQualityThumbnail: proto.Message.IImageMessage }> {
    const file = await this.media.load(instanceId, source);
    const { imageMessage } = await prepareWAMessageMedia(
      { image: file.data, mimetype: realMimetype('image', file.data, file.mimetype, 'linkPreviewImage') },
      { upload: socket.waUploadToServer, mediaTypeOverride: 'thumbnail-link' },
    );
    if (!imageMessage) throw new RpcError(ErrorCode.BadRequest, 'the link preview image could not be prepared');
    return { jpegThumbnail: imageMessage.jpegThumbnail ? Buffer.from(imageMessage.jpegThumbnail) : undefined, highQualityThumbnail: imageMessage };
  }

  /** Uploads a header's file (like any media send) and puts it in the header the path leads to. */
  private async attach(socket: WASocket, instanceId: string, message: Record<string, unknown>, attachment: ProtoAttachment): Promise<void> {
    const file = await this.media.load(instanceId, attachment.source);
    const mimetype = realMimetype(attachment.mediaType, file.data, attachment.mimetype || file.mimetype);
    const prepared = await prepareWAMessageMedia({ [attachment.mediaType]: file.data, mimetype, fileName: attachment.fileName || file.fileName } as never, {
      upload: socket.waUploadToServer,
    });
    let header: Record<string, unknown> = message;
    for (const step of attachment.path) {
      const next = (header as Record<string | number, unknown>)[step];
      if (next === undefined || next === null) (header as Record<string | number, unknown>)[step] = {};
      header = (header as Record<string | number, unknown>)[step] as Record<string, unknown>;
    }
    const field = `${attachment.mediaType}Message` as const;
    header[field] = prepared[field];
    header.hasMediaAttachment = true;
  }

  private async storedMessage(instanceId: string, id: string): Promise<WAMessage | undefined> {
    const found = await this.ledger.rawMessage(instanceId, id);
    if (!found) return undefined;
    if (found.raw) return JSON.parse(found.raw, BufferJSON.reviver) as WAMessage;
    // No raw copy (e.g. a message only queued): enough of a key and text to quote it.
    return { key: keyOf(found.row), message: { conversation: found.row.text } } as WAMessage;
  }

  private async targetKey(instanceId: string, id: string): Promise<WAMessageKey> {
    const found = await this.ledger.rawMessage(instanceId, id);
    if (!found) throw new RpcError(ErrorCode.NotFound, 'Message not found');
    return keyOf(found.row);
  }
}

/**
 * The mimetype a file is sent with: its real type, read from its bytes. A file whose bytes are not the
 * kind the send claims (an HTML page given as an image) is refused before anything goes out.
 */
function realMimetype(kind: DeclaredMediaKind, data: Buffer, declared: string, field?: string): string {
  const checked = checkMediaBytes(kind, data, declared, field);
  if (!checked.ok) throw new RpcError(ErrorCode.BadRequest, checked.error);
  return checked.mimetype;
}

/** The group's metadata; a group WhatsApp does not show the instance is a NotFound. */
async function groupMetadata(socket: WASocket, groupJid: string) {
  return socket.groupMetadata(groupJid).catch((error: unknown) => {
    throw isUnknownGroup(groupJid, error) ? new RpcError(ErrorCode.NotFound, GROUP_NOT_FOUND) : error;
  });
}

/** In a group, pinning follows the group's own setting: when only admins edit it, only admins pin. */
async function assertMayPin(socket: WASocket, groupJid: string): Promise<void> {
  const metadata = await groupMetadata(socket, groupJid);
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

function keyOf(row: MessageRow): WAMessageKey {
  return { remoteJid: row.chatId, fromMe: row.fromMe, id: row.messageId, participant: row.isGroup && !row.fromMe ? row.sender : undefined };
}
