import type { GroupInfoFields, GroupParticipantObject } from './group';
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
  'webhook',
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
  message: Record<string, unknown> & {
    id: string;
    messageid: string;
    chatid: string;
    messageType: string;
    fromMe: boolean;
    isGroup: boolean;
    wasSentByApi: boolean;
    groupName: string;
  };
  owner: string;
  [key: string]: unknown;
}

/** States a `messages_update` event reports; the status of the messages it names. */
export type MessageUpdateState = 'Sent' | 'Delivered' | 'Read' | 'Played' | 'Failed' | 'Deleted' | 'Pinned' | 'Unpinned' | 'Edited';

/** `messages_update` kinds: receipts, revokes, error acks, and the API's pin/unpin/edit of a stored message. */
export type MessageUpdateType = 'ReadReceipt' | 'Deleted' | 'Failed' | 'Pinned' | 'Unpinned' | 'Edited';

/**
 * `messages_update`: receipts and other changes of messages already announced (uazapi-notes §3).
 * Receipts use `type: 'ReadReceipt'` whatever the state; a revoke (delete for everyone) is
 * `type: 'Deleted'`, an error ack `type: 'Failed'` with `error`; `/message/pin` and `/message/edit`
 * report `Pinned`, `Unpinned` and `Edited` (type and state alike). The booleans and the timestamp of
 * `event` are strings, as the observed payloads show (`"False"`, seconds). Built by
 * `messagesUpdatePayload` only, wherever the change happens.
 */
export interface MessagesUpdateEventPayload {
  EventType: 'messages_update';
  type: MessageUpdateType;
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

/** What a `messages_update` says, whoever builds it (the session worker, the gateway's message actions). */
export interface MessagesUpdateFacts {
  /** Provider message ids, all of one chat. */
  messageIds: string[];
  /** Chat JID (phone-number JID for users, group JID, the LID while the number is unknown). */
  chat: string;
  /** Who caused the change (JID, phone-number JID, LID; '' when unknown). */
  sender: { jid: string; pn: string; lid: string };
  fromMe: boolean;
  isGroup: boolean;
  type: MessageUpdateType;
  state: MessageUpdateState;
  /** Unix seconds. */
  timestamp: number;
  error?: string;
  instanceName: string;
  owner: string;
}

/** The one builder of `messages_update` payloads (strings for booleans and seconds, as the captures). */
export function messagesUpdatePayload(facts: MessagesUpdateFacts): MessagesUpdateEventPayload {
  const trueFalse = (value: boolean): 'True' | 'False' => (value ? 'True' : 'False');
  return {
    EventType: 'messages_update',
    type: facts.type,
    state: facts.state,
    event: {
      MessageIDs: facts.messageIds,
      Chat: facts.chat,
      Sender: facts.sender.jid,
      sender_pn: facts.sender.pn,
      sender_lid: facts.sender.lid,
      IsFromMe: trueFalse(facts.fromMe),
      IsGroup: trueFalse(facts.isGroup),
      Timestamp: String(Math.floor(facts.timestamp)),
      Type: facts.state,
    },
    ...(facts.error ? { error: facts.error } : {}),
    instanceName: facts.instanceName,
    owner: facts.owner,
  };
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

/**
 * `history`: what one history sync brought after pairing (or an on-demand history request). `request_id`
 * is the pairing attempt's (`/instance/connect`'s answer); `messages` are Message records.
 */
export interface HistoryEventPayload {
  EventType: 'history';
  request_id: string;
  /** Baileys' sync type (`INITIAL_BOOTSTRAP`, `RECENT`, `ON_DEMAND`, …). */
  syncType: string;
  progress: number | null;
  isLatest: boolean | null;
  counts: { chats: number; contacts: number; messages: number };
  messages: Array<Record<string, unknown>>;
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/**
 * `groups`, `type: 'Group'`: participants joined, left, were promoted or demoted (captures groups/join.added.other,
 * join.link.other, leave.*). Only the list of the change's kind is filled (`Join`+`JoinLid`, `Leave`+`LeaveLid`, …);
 * the other person lists are null and the other `…Lid` lists absent. `Sender`/`SenderPN` are null when nobody
 * acted for the member (a join by link), and `sender_pn`/`sender_lid` are then absent. Baileys does not expose
 * the participant version ids: they are ''.
 */
/** whatsmeow's GroupLinkChange: the other group of a community link. */
export interface GroupLinkChange {
  /** `parent` (the group's community), `sub` (a group of the community), `sibling`. */
  Type: string;
  UnlinkReason: string;
  Group: {
    JID: string;
    GroupName: { Name: string; NameSetAt: string; NameSetBy: string; NameSetByPN: string };
    GroupIsDefaultSub: { IsDefaultSubGroup: boolean };
  };
}

export interface GroupChangeEvent {
  JID: string;
  Notify: string;
  Sender: string | null;
  SenderPN: string | null;
  /** RFC 3339, seconds. */
  Timestamp: string;
  /** The group was renamed (whatsmeow's GroupName). */
  Name: { Name: string; NameSetAt: string; NameSetBy: string; NameSetByPN: string } | null;
  /** The description was set or removed (whatsmeow's GroupTopic). */
  Topic: { Topic: string; TopicID: string; TopicSetAt: string; TopicSetBy: string; TopicSetByPN: string; TopicDeleted: boolean } | null;
  /** Only admins edit the group's info, or everyone again (whatsmeow's GroupLocked). */
  Locked: { IsLocked: boolean } | null;
  /** Only admins send, or everyone again (whatsmeow's GroupAnnounce). */
  Announce: { IsAnnounce: boolean; AnnounceVersionID: string } | null;
  /** Disappearing messages turned on (the timer, seconds) or off (whatsmeow's GroupEphemeral). */
  Ephemeral: { IsEphemeral: boolean; DisappearingTimer: number } | null;
  /** Join approval turned on or off (whatsmeow's GroupMembershipApprovalMode). */
  MembershipApprovalMode: { IsJoinApprovalRequired: boolean } | null;
  Delete: null;
  /** The group joined a community (`Type` parent) or a community got a group (`Type` sub): whatsmeow's GroupLinkChange. */
  Link: GroupLinkChange | null;
  /** The group left its community, or the community lost a group. */
  Unlink: GroupLinkChange | null;
  /** The invite link was reset: the new link. */
  NewInviteLink: string | null;
  PrevParticipantVersionID: string;
  ParticipantVersionID: string;
  JoinReason: string;
  Suspended: boolean;
  Unsuspended: boolean;
  UnknownChanges: null;
  Join: string[] | null;
  Leave: string[] | null;
  Promote: string[] | null;
  Demote: string[] | null;
  JoinLid?: string[];
  LeaveLid?: string[];
  PromoteLid?: string[];
  DemoteLid?: string[];
  /**
   * Someone asked to join (`created`), withdrew the request (`revoked`) or an admin rejected it (`rejected`);
   * approved requests come as a `Join`. Told to the group's admins only.
   */
  MembershipRequest?: { Action: 'created' | 'revoked' | 'rejected'; JID: string; PhoneNumber: string; LID: string; Method: string };
  /** Who may add members changed (admin_add / all_member_add). */
  MemberAddMode?: 'admin_add' | 'all_member_add';
  /** The group's picture was set or removed (whatsmeow's Picture event: PictureID of the new one). */
  Picture?: { Remove: boolean; PictureID: string; Author: string; AuthorPN: string };
  sender_pn?: string;
  sender_lid?: string;
}

/** A member of the group object of a `JoinedGroup` event. */
/** A member in the `JoinedGroup` event: the same shape as in the API's Group. */
export type JoinedGroupParticipant = GroupParticipantObject;

/**
 * `groups`, `type: 'JoinedGroup'`: the instance itself joined (added, or by link); `event` is the whole group
 * (capture groups/join.link.me.json). Times are RFC 3339 (`0001-01-01T00:00:00Z` when unknown).
 */
export interface JoinedGroupEvent extends GroupInfoFields {
  /** `invite` for a join by link, '' when an admin added the instance. */
  Reason: string;
  Type: string;
  CreateKey: string;
  Sender: string | null;
  SenderPN: string | null;
  Notify: string;
  Suspended: boolean;
}

export type GroupsEventPayload =
  | { EventType: 'groups'; event: GroupChangeEvent; instanceName: string; owner: string; type: 'Group'; [key: string]: unknown }
  | { EventType: 'groups'; event: JoinedGroupEvent; instanceName: string; owner: string; type: 'JoinedGroup'; [key: string]: unknown };

/** `call`: an incoming call offer and how it ended (`status`: offer, reject, timeout, accept, terminate, …). */
export interface CallEventPayload {
  EventType: 'call';
  event: {
    id: string;
    /** The caller: phone-number JID, else the LID. */
    from: string;
    from_lid: string;
    chatId: string;
    isGroup: boolean;
    groupJid: string;
    isVideo: boolean;
    status: string;
    offline: boolean;
    /** Unix milliseconds. */
    timestamp: number;
  };
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/** `newsletter_messages`: a post of a followed channel, as a Message record. */
export interface NewsletterMessagesEventPayload {
  EventType: 'newsletter_messages';
  /** The channel's JID (`…@newsletter`). */
  newsletter: string;
  server_id: string;
  message: Record<string, unknown>;
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/** `sender`: a bulk-send folder (campaign) changed status; its counters as of then. */
export interface SenderEventPayload {
  EventType: 'sender';
  folder_id: string;
  folder: string;
  info: string;
  status: string;
  count: number;
  pending: number;
  log_total: number;
  /** Spelled as uazapi spells it. */
  log_sucess: number;
  log_failed: number;
  log_delivered: number;
  log_read: number;
  log_played: number;
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/**
 * `webhook`, `type: 'Disabled'`: the relay disabled a webhook on its own, because it failed for longer than
 * WEBHOOK_DISABLE_AFTER (default 5 days) or its receiver answered 410 Gone. Written in the transaction that
 * disables it, for the instance's other consumers (SSE, its other webhooks, the global webhook); a global
 * webhook's event belongs to no instance (`instanceName` and `owner` are '').
 */
export interface WebhookEventPayload {
  EventType: 'webhook';
  type: 'Disabled';
  webhook: {
    id: string;
    url: string;
    /** The global webhook (`/globalwebhook`) rather than one of the instance's. */
    global: boolean;
    /** `failing since <ISO time>` or `410 Gone from the receiver`. */
    reason: string;
    /** When its deliveries began to fail (ISO 8601); null for a 410. */
    failingSince: string | null;
  };
  instanceName: string;
  owner: string;
  [key: string]: unknown;
}

/** Older event names still accepted wherever events are chosen (webhooks, SSE); `leads` is never emitted. */
export const LEGACY_EVENT_TYPES = ['leads'] as const;
