import type { DescribedContent } from '@gw/domain';
import type { NewMessage } from '@gw/persistence';
import { recordId } from '@gw/platform';
import { getDevice, type WAMessage } from '../baileys';
import type { Party } from './identity-resolver';
import { serialiseMessage } from './raw-message';

/** Baileys' WebMessageInfo.Status → the API's status names. */
const STATUS_NAMES: Record<number, string> = { 0: 'Failed', 1: 'Pending', 2: 'Sent', 3: 'Delivered', 4: 'Read', 5: 'Played' };

export function statusName(status: number | null | undefined): string {
  return typeof status === 'number' ? (STATUS_NAMES[status] ?? '') : '';
}

/** Seconds (number or Long) → milliseconds; now when absent. */
export function timestampMs(value: unknown): number {
  const seconds =
    typeof value === 'number'
      ? value
      : typeof (value as { toNumber?: () => number } | null)?.toNumber === 'function'
        ? (value as { toNumber(): number }).toNumber()
        : Number(value);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now();
}

/** Where a message belongs: the chat as one row (phone JID + LID, or the group) and its author. */
export interface MessagePlace {
  chatId: string;
  chatLid: string;
  isGroup: boolean;
  sender: Party;
}

export interface MappedMessage {
  message: WAMessage;
  described: DescribedContent;
  place: MessagePlace;
  senderName: string;
  /** API status of a message of ours ('' for received ones). */
  status: string;
  /** Poll vote / list choice text when the content alone does not say it. */
  vote?: string;
}

/** The columns only a send through the API fills: empty for what the instance receives or sees. */
export const NOT_SENT_BY_API = {
  convertOptions: '',
  error: '',
  wasSentByApi: false,
  pinned: false,
  sendFunction: '',
  sendPayload: null,
  fileUrl: '',
  sendFolderId: '',
  trackSource: '',
  trackId: '',
} as const satisfies Partial<NewMessage>;

/** The messages row of a WAMessage (a new `r…` id; the store keeps an existing row's id). */
export function toNewMessage(instanceId: string, input: MappedMessage): NewMessage {
  const { message, described, place } = input;
  const key = message.key;
  const messageId = key.id ?? '';
  return {
    instanceId,
    id: recordId(7),
    messageId,
    chatId: place.chatId,
    chatLid: place.chatLid,
    sender: place.sender.jid,
    senderPn: place.sender.pn,
    senderLid: place.sender.lid,
    senderName: input.senderName,
    isGroup: place.isGroup,
    fromMe: Boolean(key.fromMe),
    messageType: described.messageType,
    type: described.type,
    mediaType: described.mediaType,
    source: messageId ? getDevice(messageId) : 'unknown',
    messageTimestamp: timestampMs(message.messageTimestamp),
    status: input.status,
    text: described.text,
    quoted: described.quoted,
    edited: described.edited,
    reaction: described.reaction,
    vote: input.vote ?? described.vote,
    buttonOrListId: described.buttonOrListid,
    content: described.content,
    raw: serialiseMessage(message),
    ...NOT_SENT_BY_API,
  };
}
