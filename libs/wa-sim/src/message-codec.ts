// Messages as the simulated phones, groups and newsletters encode them: ids, padding, proto JSON, and the
// stanza attributes (type, mediatype) Baileys computes for a message.
import { randomBytes } from 'crypto';
import { proto } from './baileys';

/** A new message id, as a phone makes one. */
export function generateMessageId(): string {
  // Phones use 32 hex chars (Android) or "3A" + 18 (iOS); either is fine for Baileys.
  return `3A${randomBytes(9).toString('hex').toUpperCase()}`;
}

/** A message's bytes with the random padding WhatsApp clients add before encrypting. */
export function padMessage(message: proto.IMessage): Buffer {
  const bytes = proto.Message.encode(message).finish();
  const padLength = (randomBytes(1)[0] & 0x0f) + 1;
  return Buffer.concat([bytes, Buffer.alloc(padLength, padLength)]);
}

/** A message as proto JSON (how inboxes, outboxes and the state file keep it). */
export function messageToJson(message: proto.IMessage): Record<string, unknown> {
  return proto.Message.fromObject(message).toJSON() as Record<string, unknown>;
}

/** The stanza `type` attribute for a message, as Baileys computes it. */
export function stanzaTypeFor(message: proto.IMessage): string {
  const m = message.ephemeralMessage?.message ?? message.viewOnceMessage?.message ?? message.viewOnceMessageV2?.message ?? message;
  if (m.reactionMessage || m.encReactionMessage) return 'reaction';
  if (m.pollCreationMessage || m.pollCreationMessageV2 || m.pollCreationMessageV3 || m.pollUpdateMessage) return 'poll';
  if (m.eventMessage) return 'event';
  if (
    m.imageMessage ||
    m.videoMessage ||
    m.audioMessage ||
    m.documentMessage ||
    m.stickerMessage ||
    m.contactMessage ||
    m.contactsArrayMessage ||
    m.locationMessage ||
    m.liveLocationMessage
  ) {
    return 'media';
  }
  return 'text';
}

/** The `mediatype` attribute of a message's `<enc>`, as Baileys computes it. */
export function mediaTypeFor(message: proto.IMessage): string | undefined {
  if (message.imageMessage) return 'image';
  if (message.videoMessage) return message.videoMessage.gifPlayback ? 'gif' : 'video';
  if (message.audioMessage) return message.audioMessage.ptt ? 'ptt' : 'audio';
  if (message.documentMessage) return 'document';
  if (message.stickerMessage) return 'sticker';
  if (message.contactMessage) return 'vcard';
  if (message.contactsArrayMessage) return 'contact_array';
  if (message.liveLocationMessage) return 'livelocation';
  return undefined;
}
