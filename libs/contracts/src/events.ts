import type { InstanceStatus } from './instance';

/**
 * Event payloads as stored in the outbox. The webhook relay and SSE add the delivery-time fields
 * (`BaseUrl`, and `token` only when the operator or the webhook asks for it).
 */
export const EVENT_TYPES = [
  'connection',
  'history',
  'messages',
  'messages_update',
  'chats',
  'contacts',
  'presence',
  'groups',
  'labels',
  'chat_labels',
  'blocks',
  'call',
  'newsletter_messages',
  'sender',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** `connection`: every change of an instance's connection state (captures: connection/*.json). */
export interface ConnectionEventPayload {
  EventType: 'connection';
  instance: {
    name: string;
    status: InstanceStatus;
    qrcode?: string;
    paircode?: string;
    lastDisconnect?: string;
    lastDisconnectReason?: string;
  };
  instanceName: string;
  owner: string;
  /** `LoggedOut` when the device was logged out. */
  type?: 'LoggedOut';
  [key: string]: unknown;
}

/**
 * `messages`: a message was received, or sent from the phone or the API (captures: messages/**).
 * `chat` is the API's Chat record and `message` its Message record plus `groupName` (`Unknown` outside
 * groups), as the gateway's record mappers build them (libs/persistence/src/records).
 */
export interface MessagesEventPayload {
  EventType: 'messages';
  chat: Record<string, unknown> & { wa_chatid: string; wa_chatlid: string };
  /** Always `updated` in the captures. */
  chatSource: 'updated';
  instanceName: string;
  message: Record<string, unknown> & { id: string; messageid: string; chatid: string; messageType: string; fromMe: boolean; isGroup: boolean; wasSentByApi: boolean; groupName: string };
  owner: string;
  [key: string]: unknown;
}

/** States a `messages_update` event reports; the status of the messages it names. */
export type MessageUpdateState = 'Sent' | 'Delivered' | 'Read' | 'Played' | 'Failed' | 'Deleted';

/**
 * `messages_update`: receipts and other changes of messages already announced (uazapi-notes §3).
 * Receipts use `type: 'ReadReceipt'` whatever the state; a revoke (delete for everyone) is
 * `type: 'Deleted'`, an error ack `type: 'Failed'` with `error`. The booleans and the timestamp of
 * `event` are strings, as the observed payloads show (`"False"`, seconds).
 */
export interface MessagesUpdateEventPayload {
  EventType: 'messages_update';
  type: 'ReadReceipt' | 'Deleted' | 'Failed';
  state: MessageUpdateState;
  event: {
    /** Provider message ids (`messageid`, no owner prefix). */
    MessageIDs: string[];
    /** Chat JID: phone-number JID for users, group JID for groups. */
    Chat: string;
    /** Who caused the change: the reader of a receipt, the author of a revoke. */
    Sender: string;
    sender_pn: string;
    sender_lid: string;
    IsFromMe: 'True' | 'False';
    IsGroup: 'True' | 'False';
    /** Unix seconds, as a string. */
    Timestamp: string;
    Type: MessageUpdateState;
  };
  error?: string;
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/** A contact as the `contacts` event reports it. */
export interface ContactEventRecord {
  /** Phone-number JID, or the LID while the number is unknown. */
  jid: string;
  lid: string;
  /** Digits of the phone number ('' when unknown). */
  phone: string;
  /** Name saved in the address book. */
  contactName: string;
  /** Profile (push) name. */
  pushName: string;
  verifiedName: string;
}

/** `contacts`: contacts learned or renamed (push names from messages, address-book sync). */
export interface ContactsEventPayload {
  EventType: 'contacts';
  contacts: ContactEventRecord[];
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/** `chats`: conversation settings changed apart from messages (archive, pin, mute, read, group name). */
export interface ChatsEventPayload {
  EventType: 'chats';
  /** Chat records (the API's Chat schema). */
  chats: Array<Record<string, unknown> & { wa_chatid: string; wa_chatlid: string }>;
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/** Presence states a `presence` event reports. */
export type PresenceState = 'available' | 'unavailable' | 'composing' | 'recording' | 'paused';

/**
 * `presence`: a contact came online or went offline (`type: 'Presence'`, after the instance talked
 * with them), or is typing / recording / stopped in a chat with the instance (`type: 'ChatPresence'`).
 */
export interface PresenceEventPayload {
  EventType: 'presence';
  type: 'Presence' | 'ChatPresence';
  event: {
    /** The chat: the contact's phone-number JID (LID while unknown), or the group JID. */
    Chat: string;
    /** Whose presence it is: phone-number JID, else the LID. */
    Sender: string;
    sender_pn: string;
    sender_lid: string;
    IsGroup: boolean;
    State: PresenceState;
    /** Unix seconds of the contact's last sighting, when WhatsApp told it (going offline); else null. */
    LastSeen: number | null;
  };
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/** One change of the blocklist. */
export interface BlockChangeRecord {
  /** Phone-number JID, or the LID while the number is unknown. */
  jid: string;
  lid: string;
  action: 'block' | 'unblock';
}

/** `blocks`: contacts were blocked or unblocked (by the API, the phone or another device). */
export interface BlocksEventPayload {
  EventType: 'blocks';
  changes: BlockChangeRecord[];
  /** The whole blocklist afterwards (phone-number JIDs, LIDs while unknown). */
  blockList: string[];
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/** `labels`: a label created, renamed, recoloured or deleted on the phone, or re-read by a refresh. */
export interface LabelsEventPayload {
  EventType: 'labels';
  label: { id: string; labelid: string; name: string; color: number; deleted: boolean; predefinedId: string };
  /** The `/labels/refresh` that caused it; '' for changes the phone made. */
  request_id: string;
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/** `chat_labels`: a label put on or taken off a chat; `labels` is the chat's list afterwards (null when the chat is unknown). */
export interface ChatLabelsEventPayload {
  EventType: 'chat_labels';
  event: { chatid: string; labelid: string; action: 'add' | 'remove'; labels: string[] | null };
  request_id: string;
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/** Older event names still accepted wherever events are chosen (webhooks, SSE); `leads` is never emitted. */
export const LEGACY_EVENT_TYPES = ['leads'] as const;
