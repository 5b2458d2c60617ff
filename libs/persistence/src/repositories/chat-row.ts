// A chat as the repositories see it: its row shape, the observation that updates it, and the SQL
// that applies one (shared by ChatRepository and InboundGroupRepository's batched writes).
export interface ChatRow {
  instanceId: string;
  id: string;
  waChatId: string;
  waChatLid: string;
  name: string;
  waName: string;
  waContactName: string;
  image: string;
  imagePreview: string;
  isGroup: boolean;
  groupFlags: Record<string, boolean>;
  archived: boolean;
  pinned: boolean;
  blocked: boolean;
  muteEndTime: number;
  unreadCount: number;
  ephemeralExpiration: number;
  labels: string[];
  notes: string;
  lastMsgTimestamp: number;
  lastMessageType: string;
  lastMessageTextVote: string;
  lastMessageSender: string;
  lead: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

/** What a message or a sync tells about a conversation; absent fields are left as they are. */
export interface ChatObservation {
  /** Phone-number JID (users), or the group / newsletter JID. */
  waChatId?: string;
  /** LID of a user conversation. */
  waChatLid?: string;
  isGroup?: boolean;
  waName?: string;
  waContactName?: string;
  /** `incomingCount`: how many incoming messages this observation stands for (a history chunk's chat: one observation for many); else `incoming` counts 1. */
  lastMessage?: { timestamp: number; type: string; textVote: string; sender: string; incoming: boolean; incomingCount?: number };
  ephemeralExpiration?: number;
}

/** The identifiers of one conversation: phone-number JID (or group JID) and LID, '' when unknown. */
export interface ChatIdentity {
  pn: string;
  lid: string;
  isGroup: boolean;
}

/** Counts over all of an instance's chats (`/chat/find`'s `totalChatsStats`). */
export interface ChatTotals {
  total_chats: number;
  unread_chats: number;
  archived_chats: number;
  pinned_chats: number;
  blocked_chats: number;
  groups: number;
  groups_admin: number;
  groups_announce: number;
  groups_member: number;
}

/** Conversation settings that change apart from messages; absent fields stay as they are. */
export interface ChatState {
  archived?: boolean;
  pinned?: boolean;
  muteEndTime?: number;
  unreadCount?: number;
  /** Profile or group name. */
  waName?: string;
  /** Name saved in the address book. */
  waContactName?: string;
  groupFlags?: Record<string, boolean>;
  /** Marked unread (WhatsApp's badge): a chat with no unread messages counts one, one with some keeps its count. */
  markedUnread?: boolean;
  /** Disappearing messages timer in seconds (0: off). */
  ephemeralExpiration?: number;
  /** The chat's note (WhatsApp Business), '' when it has none. */
  notes?: string;
  /** The contact's or group's picture URLs, '' when it has none. */
  image?: string;
  imagePreview?: string;
}

export type Raw = Record<string, unknown>;

/** The SQL expressions of an observation's fields (parameters, or columns of a round's input). */
export interface ObservationExpressions {
  pn: string;
  lid: string;
  name: string;
  contact: string;
  ts: string;
  type: string;
  text: string;
  sender: string;
  incoming: string;
  ephemeral: string;
}

/**
 * What an observation does to a chat row (its identifiers, names, last message, unread count and
 * timer): each column it sets, with that column's type and its new value as an expression of the
 * observation's fields and the row's columns as they were (named bare).
 */
export function observationAssignments(v: ObservationExpressions): Array<[column: string, type: string, value: string]> {
  const newer = `${v.ts} >= last_msg_timestamp`;
  return [
    ['wa_chatid', 'text', `CASE WHEN ${v.pn} <> '' THEN ${v.pn} ELSE wa_chatid END`],
    ['wa_chatlid', 'text', `CASE WHEN ${v.lid} <> '' THEN ${v.lid} ELSE wa_chatlid END`],
    ['wa_name', 'text', `COALESCE(NULLIF(${v.name}, ''), wa_name)`],
    ['wa_contact_name', 'text', `COALESCE(NULLIF(${v.contact}, ''), wa_contact_name)`],
    ['name', 'text', `COALESCE(NULLIF(${v.contact}, ''), NULLIF(${v.name}, ''), NULLIF(name, ''), '')`],
    ['last_msg_timestamp', 'bigint', `CASE WHEN ${newer} THEN ${v.ts} ELSE last_msg_timestamp END`],
    ['last_message_type', 'text', `CASE WHEN ${newer} AND ${v.type} <> '' THEN ${v.type} ELSE last_message_type END`],
    ['last_message_text_vote', 'text', `CASE WHEN ${newer} AND ${v.type} <> '' THEN ${v.text} ELSE last_message_text_vote END`],
    ['last_message_sender', 'text', `CASE WHEN ${newer} AND ${v.type} <> '' THEN ${v.sender} ELSE last_message_sender END`],
    // A chat only marked unread counts 1 without a message behind it: the next message is that 1.
    ['unread_count', 'integer', `CASE WHEN ${v.incoming} > 0 AND marked_unread THEN ${v.incoming} ELSE unread_count + ${v.incoming} END`],
    ['marked_unread', 'boolean', `marked_unread AND ${v.incoming} = 0`],
    ['ephemeral_expiration', 'integer', `COALESCE(${v.ephemeral}, ephemeral_expiration)`],
    ['updated_at', 'timestamptz', 'now()'],
  ];
}

/**
 * The assignments that apply an observation to a chat row, from the SQL expressions of the
 * observation's fields: a parameter each in updateChat, a column of the round's input in
 * InboundGroupRepository.
 */
export function observationSql(v: ObservationExpressions): string {
  return observationAssignments(v)
    .map(([column, , value]) => `${column} = ${value}`)
    .join(',\n    ');
}

/**
 * Whether a chat's stored group flags hold each of `flags` with the same value: what applyState's
 * `group_flags @> …` test finds, so a caller can skip a write that would change nothing.
 */
export function holdsGroupFlags(chat: Pick<ChatRow, 'groupFlags'>, flags: Record<string, boolean>): boolean {
  if (!chat.groupFlags) return false;
  return Object.entries(flags).every(([name, value]) => chat.groupFlags[name] === value);
}

/** An observation's values for observationSql after its identifiers: name, contact, ts, type, text, sender, incoming, ephemeral. */
export function observationValues(observation: ChatObservation): unknown[] {
  const last = observation.lastMessage;
  return [
    observation.waName ?? '',
    observation.waContactName ?? '',
    last?.timestamp ?? 0,
    last?.type ?? '',
    last?.textVote ?? '',
    last?.sender ?? '',
    last?.incomingCount ?? (last?.incoming ? 1 : 0),
    observation.ephemeralExpiration ?? null,
  ];
}

/** The columns toChatRow reads. */
export const CHAT_COLUMNS = [
  'instance_id',
  'id',
  'wa_chatid',
  'wa_chatlid',
  'name',
  'wa_name',
  'wa_contact_name',
  'image',
  'image_preview',
  'is_group',
  'group_flags',
  'archived',
  'pinned',
  'blocked',
  'mute_end_time',
  'unread_count',
  'ephemeral_expiration',
  'labels',
  'notes',
  'last_msg_timestamp',
  'last_message_type',
  'last_message_text_vote',
  'last_message_sender',
  'lead',
  'created_at',
  'updated_at',
];

export function toChatRow(raw: Raw): ChatRow {
  return {
    instanceId: raw.instance_id as string,
    id: raw.id as string,
    waChatId: raw.wa_chatid as string,
    waChatLid: raw.wa_chatlid as string,
    name: raw.name as string,
    waName: raw.wa_name as string,
    waContactName: raw.wa_contact_name as string,
    image: raw.image as string,
    imagePreview: raw.image_preview as string,
    isGroup: raw.is_group as boolean,
    groupFlags: raw.group_flags as Record<string, boolean>,
    archived: raw.archived as boolean,
    pinned: raw.pinned as boolean,
    blocked: raw.blocked as boolean,
    muteEndTime: Number(raw.mute_end_time),
    unreadCount: Number(raw.unread_count),
    ephemeralExpiration: Number(raw.ephemeral_expiration),
    labels: raw.labels as string[],
    notes: raw.notes as string,
    lastMsgTimestamp: Number(raw.last_msg_timestamp),
    lastMessageType: raw.last_message_type as string,
    lastMessageTextVote: raw.last_message_text_vote as string,
    lastMessageSender: raw.last_message_sender as string,
    lead: raw.lead as Record<string, unknown>,
    createdAt: raw.created_at as Date,
    updatedAt: raw.updated_at as Date,
  };
}
