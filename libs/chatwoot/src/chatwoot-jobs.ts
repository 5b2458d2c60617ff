import { createHash } from 'node:crypto';
import type { ChatwootMessageLink, NewChatwootJob, OutboxRow } from '@gw/persistence';

/** The kinds of work of the bridge: WhatsApp → Chatwoot (`wa.*`) and Chatwoot → WhatsApp (`cw.*`). */
export const JobKind = {
  /** Copy a WhatsApp message (received, or sent from the phone or the API) into its conversation. */
  WaMessage: 'wa.message',
  /** Receipts and deletions of WhatsApp messages already copied. */
  WaUpdate: 'wa.update',
  /** Send an agent's reply to the contact on WhatsApp. */
  CwSend: 'cw.send',
  /** An agent deleted a reply: delete it on WhatsApp. */
  CwDelete: 'cw.delete',
} as const;

/** The `source_id` the bridge gives a Chatwoot message copied from WhatsApp (Evolution's convention): its own webhooks are known by it. */
export const SOURCE_PREFIX = 'WAID:';
export const sourceIdOf = (waMessageId: string) => `${SOURCE_PREFIX}${waMessageId}`;

/**
 * The WhatsApp ids of part `part` (one per attachment) of Chatwoot message `cwMessageId`: fixed, so a
 * retried send reaches the worker's send ledger with the same id and is relayed at most once.
 */
export function whatsappIdsOf(instanceId: string, cwMessageId: number, part: number): { messageId: string; recordId: string } {
  const hash = createHash('sha256').update(`${instanceId}:chatwoot:${cwMessageId}:${part}`).digest('hex');
  return { messageId: `3EB0${hash.slice(0, 18).toUpperCase()}`, recordId: `r${hash.slice(18, 25)}` };
}

/** The fixed id of the revoke of WhatsApp message `waMessageId` asked for from Chatwoot. */
export function revokeIdsOf(instanceId: string, waMessageId: string): { messageId: string; recordId: string } {
  const hash = createHash('sha256').update(`${instanceId}:chatwoot-delete:${waMessageId}`).digest('hex');
  return { messageId: `3EB0${hash.slice(0, 18).toUpperCase()}`, recordId: `r${hash.slice(18, 25)}` };
}

/** A JSON object as received (events, webhooks): read through `objectOf` and `stringOf`. */
export type JsonObject = Record<string, unknown>;
export const objectOf = (value: unknown): JsonObject => (value && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : {});
export const stringOf = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The fields of a `messages` event's Message record a `wa.message` job keeps (as the record has them). */
export interface WaMessageFields {
  id?: string;
  messageid: string;
  chatid?: string;
  chatlid?: string;
  sender?: string;
  sender_pn?: string;
  sender_lid?: string;
  senderName?: string;
  fromMe?: boolean;
  isGroup?: boolean;
  messageType?: string;
  type?: string;
  mediaType?: string;
  text?: string;
  content?: unknown;
  quoted?: string;
  edited?: string;
  reaction?: string;
  vote?: string;
  messageTimestamp?: number;
  wasSentByApi?: boolean;
  groupName?: string;
}

/** The fields of a `messages` event's Chat record a `wa.message` job keeps. */
export interface WaChatFields {
  wa_chatid?: string;
  wa_chatlid?: string;
  wa_name?: string;
  wa_contactName?: string;
  name?: string;
  wa_isGroup?: boolean;
  phone?: string;
}

/** The fields of a `messages` event's Message record the bridge reads. */
const MESSAGE_FIELDS = [
  'id',
  'messageid',
  'chatid',
  'chatlid',
  'sender',
  'sender_pn',
  'sender_lid',
  'senderName',
  'fromMe',
  'isGroup',
  'messageType',
  'type',
  'mediaType',
  'text',
  'content',
  'quoted',
  'edited',
  'reaction',
  'vote',
  'messageTimestamp',
  'wasSentByApi',
  'groupName',
] as const;
const CHAT_FIELDS = ['wa_chatid', 'wa_chatlid', 'wa_name', 'wa_contactName', 'name', 'wa_isGroup', 'phone'] as const;

function pick(source: unknown, fields: readonly string[]): Record<string, unknown> {
  const record = (source ?? {}) as Record<string, unknown>;
  const picked: Record<string, unknown> = {};
  for (const field of fields) if (record[field] !== undefined) picked[field] = record[field];
  return picked;
}

/**
 * The LIDs (`…@lid`) events name as their chat: the handler looks their numbers up, so a contact's jobs
 * share one lane whichever way an event names it.
 */
export function lidsOfEvents(events: OutboxRow[]): string[] {
  const lids = new Set<string>();
  for (const event of events) {
    const chat = objectOf(event.payload.chat);
    const named = event.eventType === 'messages' ? stringOf(chat.wa_chatid) || stringOf(chat.wa_chatlid) : stringOf(objectOf(event.payload.event).Chat);
    if (named.endsWith('@lid')) lids.add(named);
  }
  return [...lids];
}

/**
 * The outbox follower's handler body: each `messages` and `messages_update` event becomes one job,
 * keyed by the event id (the follower hands each event over once; the key makes a replay harmless too).
 * `pnOfLid`: the numbers of LIDs known (lanes are by phone-number JID whenever it is known).
 */
export function jobsOfEvents(events: OutboxRow[], pnOfLid: ReadonlyMap<string, string> = new Map()): NewChatwootJob[] {
  const waLane = (chat: string) => `wa:${pnOfLid.get(chat) ?? chat}`;
  const jobs: NewChatwootJob[] = [];
  for (const event of events) {
    const payload = event.payload;
    if (event.eventType === 'messages') {
      const message = payload.message as Record<string, unknown> | undefined;
      const chat = payload.chat as Record<string, unknown> | undefined;
      if (!message || typeof message.messageid !== 'string' || !message.messageid) continue;
      const chatKey = String(chat?.wa_chatid || chat?.wa_chatlid || message.chatid || event.chatId || '');
      if (!chatKey) continue;
      jobs.push({
        lane: waLane(chatKey),
        kind: JobKind.WaMessage,
        dedupeKey: `event:${event.id}`,
        payload: { message: pick(message, MESSAGE_FIELDS), chat: pick(chat, CHAT_FIELDS) },
      });
    } else if (event.eventType === 'messages_update') {
      const update = objectOf(payload.event);
      const ids = Array.isArray(update.MessageIDs) ? (update.MessageIDs as unknown[]).filter((id): id is string => typeof id === 'string') : [];
      const state = stringOf(payload.state);
      const wanted =
        payload.type === 'Deleted' || payload.type === 'Failed' || (payload.type === 'ReadReceipt' && ['Delivered', 'Read', 'Played'].includes(state));
      if (!wanted || ids.length === 0 || typeof update.Chat !== 'string') continue;
      jobs.push({
        lane: waLane(update.Chat),
        kind: JobKind.WaUpdate,
        dedupeKey: `event:${event.id}`,
        payload: { type: payload.type, state: payload.state, ids, chat: update.Chat, fromMe: update.IsFromMe === 'True', error: payload.error ?? '' },
      });
    }
  }
  return jobs;
}

/** What a Chatwoot webhook asks of the bridge. */
export interface WebhookIntake {
  jobs: NewChatwootJob[];
  /** WhatsApp messages an agent's reply will become (written with the job, before any send). */
  links: ChatwootMessageLink[];
  /** A conversation's new status (conversation_status_changed). */
  conversationStatus?: { conversationId: number; status: string };
  /** An agent is working the conversation (a reply, or it was opened with an assignee): the chatbot stays silent. */
  agentActive?: { conversationId: number };
  /** The conversation was resolved: the chatbot may speak again. */
  resolved?: { conversationId: number };
  /** The contact of the conversation as Chatwoot has it (for a conversation the bridge did not create). */
  contact?: { identifier: string; phoneNumber: string };
}

/** An attachment of an agent's reply, as Chatwoot's webhook carries it. */
export interface ChatwootAttachmentRef {
  url: string;
  fileType: string;
  fileName: string;
}

const positiveInt = (value: unknown): number | null => {
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number > 0 ? number : null;
};

/**
 * Reads a Chatwoot webhook (the event payloads of Chatwoot's `Message#webhook_data` and
 * `Conversation#webhook_data`, `event` naming which): an agent's public outgoing `message_created`
 * becomes a send (one WhatsApp message per attachment, the text as the first one's caption); a
 * `message_updated` marked deleted a revoke; `conversation_status_changed` a status. Everything else
 * (incoming messages, private notes, the bridge's own copies, activity, other inboxes) asks for nothing.
 */
export function intakeOfWebhook(instanceId: string, body: JsonObject, inboxId: number): WebhookIntake {
  const intake: WebhookIntake = { jobs: [], links: [] };
  const event = typeof body.event === 'string' ? body.event : '';
  const conversation = objectOf(body.conversation);
  // An account-wide webhook pointed here posts every inbox's events: only the bridge's inbox is its business.
  const inboxOf = positiveInt(objectOf(body.inbox).id) ?? positiveInt(conversation.inbox_id) ?? positiveInt(body.inbox_id);
  if (inboxOf !== null && inboxOf !== inboxId) return intake;
  const sender = objectOf(objectOf(conversation.meta).sender ?? conversation.contact);
  const author = objectOf(body.sender);
  const attributes = objectOf(body.content_attributes);
  intake.contact = {
    identifier: typeof sender.identifier === 'string' ? sender.identifier : '',
    phoneNumber: typeof sender.phone_number === 'string' ? sender.phone_number : '',
  };

  if (event === 'message_created' || event === 'message_updated') {
    const messageId = positiveInt(body.id);
    const conversationId = positiveInt(conversation.id);
    if (messageId === null || conversationId === null) return intake;
    const outgoing = body.message_type === 'outgoing' || body.message_type === 1;
    const ours = typeof body.source_id === 'string' && body.source_id.startsWith(SOURCE_PREFIX);
    if (!outgoing || body.private === true || ours) return intake;
    const lane = `cw:${conversationId}`;
    if (event === 'message_updated') {
      if (attributes.deleted === true)
        intake.jobs.push({ lane, kind: JobKind.CwDelete, dedupeKey: `cw:${messageId}:delete`, payload: { conversationId, cwMessageId: messageId } });
      return intake;
    }
    const attachments: ChatwootAttachmentRef[] = (Array.isArray(body.attachments) ? body.attachments : [])
      .map(objectOf)
      .filter((attachment) => stringOf(attachment.data_url) !== '')
      .map((attachment) => ({
        url: stringOf(attachment.data_url),
        fileType: stringOf(attachment.file_type) || 'file',
        fileName: fileNameOf(stringOf(attachment.data_url), attachment.extension),
      }));
    const content = typeof body.content === 'string' ? body.content : '';
    if (!content.trim() && attachments.length === 0) return intake;
    const senderName = stringOf(author.available_name) || stringOf(author.name);
    const inReplyTo = positiveInt(attributes.in_reply_to);
    const { count: parts } = replyLayout(content, attachments);
    intake.jobs.push({
      lane,
      kind: JobKind.CwSend,
      dedupeKey: `cw:${messageId}:send`,
      payload: { conversationId, cwMessageId: messageId, content, attachments, senderName, inReplyTo, contact: intake.contact },
    });
    for (let part = 0; part < parts; part++) {
      intake.links.push({
        waMessageId: whatsappIdsOf(instanceId, messageId, part).messageId,
        cwMessageId: messageId,
        cwConversationId: conversationId,
        origin: 'chatwoot',
        chatJid: '',
      });
    }
    if (author.type === 'user' || author.type === undefined) intake.agentActive = { conversationId };
    return intake;
  }

  if (event === 'conversation_status_changed' || event === 'conversation_updated' || event === 'conversation_opened' || event === 'conversation_resolved') {
    const conversationId = positiveInt(body.id);
    const status = typeof body.status === 'string' ? body.status : '';
    if (conversationId === null || !status) return intake;
    intake.conversationStatus = { conversationId, status };
    if (status === 'resolved') intake.resolved = { conversationId };
    else if (status === 'open' && objectOf(body.meta).assignee) intake.agentActive = { conversationId };
  }
  return intake;
}

/** What WhatsApp message an attachment of an agent's reply becomes. */
export function mediaTypeOf(attachment: ChatwootAttachmentRef): 'image' | 'video' | 'audio' | 'document' {
  return attachment.fileType === 'image' ? 'image' : attachment.fileType === 'video' ? 'video' : attachment.fileType === 'audio' ? 'audio' : 'document';
}

/**
 * How an agent's reply is split into WhatsApp messages (each part has its fixed id, `whatsappIdsOf`):
 * one per attachment, the text the caption of the first that takes one (`captioned`; WhatsApp audio
 * takes none); with only audio, the text goes first on its own (`textFirst`); without attachments, the text.
 */
export function replyLayout(content: string, attachments: ChatwootAttachmentRef[]): { count: number; textFirst: boolean; captioned: number } {
  const captioned = attachments.findIndex((attachment) => mediaTypeOf(attachment) !== 'audio');
  const textFirst = attachments.length > 0 && captioned < 0 && content.trim() !== '';
  return { count: Math.max(1, attachments.length + (textFirst ? 1 : 0)), textFirst, captioned };
}

function fileNameOf(url: string, extension: unknown): string {
  let name = '';
  try {
    name = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    name = '';
  }
  if (!name) name = `file${typeof extension === 'string' && extension ? `.${extension.replace(/^\./, '')}` : ''}`;
  return name.slice(0, 200);
}

/** A job that cannot succeed as it stands (a refusal that will repeat): given up after `maxRefusals` tries. */
export class Refused extends Error {}
