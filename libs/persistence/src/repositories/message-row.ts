// A stored message as the repositories see it: its row shape, its columns and the SQL fragments
// (status rank, refresh on conflict, relayable) that the message and outbound-ledger writes share.
/** What a status change (a receipt) reports of each message it moved: see InboundGroupRepository.write(). */
export type StatusChange = Pick<MessageRow, 'instanceId' | 'messageId' | 'chatId' | 'chatLid' | 'fromMe' | 'isGroup' | 'status'>;

/** A stored message, in the API's field names where they are plain columns. */
export interface MessageRow {
  instanceId: string;
  id: string;
  messageId: string;
  chatId: string;
  chatLid: string;
  sender: string;
  senderPn: string;
  senderLid: string;
  senderName: string;
  isGroup: boolean;
  fromMe: boolean;
  messageType: string;
  type: string;
  mediaType: string;
  source: string;
  messageTimestamp: number;
  status: string;
  text: string;
  quoted: string;
  edited: string;
  reaction: string;
  vote: string;
  convertOptions: string;
  buttonOrListId: string;
  error: string;
  content: unknown;
  raw: string | null;
  wasSentByApi: boolean;
  pinned: boolean;
  sendFunction: string;
  sendPayload: unknown;
  fileUrl: string;
  sendFolderId: string;
  trackSource: string;
  trackId: string;
  /** The known contact of a call (messageType `call`); null otherwise. */
  callPeer?: CallPeer | null;
  /** What an AI agent recorded on the message (spec `ai_metadata`); null when none did. */
  aiMetadata?: Record<string, unknown> | null;
  createdAt: Date;
  updatedAt: Date;
}

/** `callPeer` of a call message: the caller as the instance knows it. */
export interface CallPeer {
  jid: string;
  name: string;
  imagePreviewUrl: string;
}

export type NewMessage = Omit<MessageRow, 'createdAt' | 'updatedAt'>;

/**
 * A message row without its raw WAMessage: what a send's answer (the Message record) is made of. The
 * send path's status writes return this, not `*`: the raw copy was most of the bytes each send's
 * settle statement sent back and the worker parsed, and nothing on that path reads it (bench/send).
 */
export type RecordRow = Omit<MessageRow, 'raw'>;

/** Status order: a receipt may arrive twice or late; a message never moves backwards. */
export const STATUS_RANK: Record<string, number> = { Queued: 0, Pending: 1, Sent: 2, Delivered: 3, Read: 4, Played: 5 };

export const COLUMNS: Array<[keyof NewMessage, string]> = [
  ['instanceId', 'instance_id'],
  ['id', 'id'],
  ['messageId', 'message_id'],
  ['chatId', 'chat_id'],
  ['chatLid', 'chat_lid'],
  ['sender', 'sender'],
  ['senderPn', 'sender_pn'],
  ['senderLid', 'sender_lid'],
  ['senderName', 'sender_name'],
  ['isGroup', 'is_group'],
  ['fromMe', 'from_me'],
  ['messageType', 'message_type'],
  ['type', 'type'],
  ['mediaType', 'media_type'],
  ['source', 'source'],
  ['messageTimestamp', 'message_timestamp'],
  ['status', 'status'],
  ['text', 'text'],
  ['quoted', 'quoted'],
  ['edited', 'edited'],
  ['reaction', 'reaction'],
  ['vote', 'vote'],
  ['convertOptions', 'convert_options'],
  ['buttonOrListId', 'button_or_list_id'],
  ['error', 'error'],
  ['content', 'content'],
  ['raw', 'raw'],
  ['wasSentByApi', 'was_sent_by_api'],
  ['pinned', 'pinned'],
  ['sendFunction', 'send_function'],
  ['sendPayload', 'send_payload'],
  ['fileUrl', 'file_url'],
  ['sendFolderId', 'send_folder_id'],
  ['trackSource', 'track_source'],
  ['trackId', 'track_id'],
  ['callPeer', 'call_peer'],
  ['aiMetadata', 'ai_metadata'],
];
const JSON_COLUMNS = new Set(['content', 'send_payload', 'call_peer', 'ai_metadata']);

export type Raw = Record<string, unknown>;

const RECORD_COLUMNS = COLUMNS.filter(([, column]) => column !== 'raw');

/** The columns of a RecordRow (every column toMessageRow reads but `raw`), qualified by `table`. */
export function recordColumnsSql(table: string): string {
  return [...RECORD_COLUMNS.map(([, column]) => column), 'created_at', 'updated_at'].map((column) => `${table}.${column}`).join(', ');
}

/**
 * A RecordRow from a statement that selected recordColumnsSql(). Written out as one object literal, as
 * toMessageRow() and messageDocument() are: an object filled key by key in a loop over COLUMNS turned into
 * a dictionary on the way (37 properties added by computed keys), ~3 KB and 1.7 µs a row where the literal
 * takes 0.4 KB and 0.26 µs (Node 26), and every later read of it a hash lookup. A send's path builds several
 * (issue #38: bench/send's allocation by stack). message-row.spec.ts holds the three to COLUMNS.
 */
export function toRecordRow(raw: Raw): RecordRow {
  return {
    instanceId: raw.instance_id as string,
    id: raw.id as string,
    messageId: raw.message_id as string,
    chatId: raw.chat_id as string,
    chatLid: raw.chat_lid as string,
    sender: raw.sender as string,
    senderPn: raw.sender_pn as string,
    senderLid: raw.sender_lid as string,
    senderName: raw.sender_name as string,
    isGroup: raw.is_group as boolean,
    fromMe: raw.from_me as boolean,
    messageType: raw.message_type as string,
    type: raw.type as string,
    mediaType: raw.media_type as string,
    source: raw.source as string,
    messageTimestamp: Number(raw.message_timestamp),
    status: raw.status as string,
    text: raw.text as string,
    quoted: raw.quoted as string,
    edited: raw.edited as string,
    reaction: raw.reaction as string,
    vote: raw.vote as string,
    convertOptions: raw.convert_options as string,
    buttonOrListId: raw.button_or_list_id as string,
    error: raw.error as string,
    content: raw.content,
    wasSentByApi: raw.was_sent_by_api as boolean,
    pinned: raw.pinned as boolean,
    sendFunction: raw.send_function as string,
    sendPayload: raw.send_payload,
    fileUrl: raw.file_url as string,
    sendFolderId: raw.send_folder_id as string,
    trackSource: raw.track_source as string,
    trackId: raw.track_id as string,
    callPeer: (raw.call_peer as CallPeer | undefined) ?? null,
    aiMetadata: (raw.ai_metadata as Record<string, unknown> | undefined) ?? null,
    createdAt: raw.created_at as Date,
    updatedAt: raw.updated_at as Date,
  };
}

/**
 * A MessageRow from a statement that selected every column (`*`): toRecordRow()'s literal with `raw`, written
 * out again rather than spread from it (a spread would allocate twice and put `raw` last, out of COLUMNS order).
 */
export function toMessageRow(raw: Raw): MessageRow {
  return {
    instanceId: raw.instance_id as string,
    id: raw.id as string,
    messageId: raw.message_id as string,
    chatId: raw.chat_id as string,
    chatLid: raw.chat_lid as string,
    sender: raw.sender as string,
    senderPn: raw.sender_pn as string,
    senderLid: raw.sender_lid as string,
    senderName: raw.sender_name as string,
    isGroup: raw.is_group as boolean,
    fromMe: raw.from_me as boolean,
    messageType: raw.message_type as string,
    type: raw.type as string,
    mediaType: raw.media_type as string,
    source: raw.source as string,
    messageTimestamp: Number(raw.message_timestamp),
    status: raw.status as string,
    text: raw.text as string,
    quoted: raw.quoted as string,
    edited: raw.edited as string,
    reaction: raw.reaction as string,
    vote: raw.vote as string,
    convertOptions: raw.convert_options as string,
    buttonOrListId: raw.button_or_list_id as string,
    error: raw.error as string,
    content: raw.content,
    raw: raw.raw as string | null,
    wasSentByApi: raw.was_sent_by_api as boolean,
    pinned: raw.pinned as boolean,
    sendFunction: raw.send_function as string,
    sendPayload: raw.send_payload,
    fileUrl: raw.file_url as string,
    sendFolderId: raw.send_folder_id as string,
    trackSource: raw.track_source as string,
    trackId: raw.track_id as string,
    callPeer: (raw.call_peer as CallPeer | undefined) ?? null,
    aiMetadata: (raw.ai_metadata as Record<string, unknown> | undefined) ?? null,
    createdAt: raw.created_at as Date,
    updatedAt: raw.updated_at as Date,
  };
}

export interface MessageQuery {
  id?: string;
  messageId?: string;
  chatId?: string;
  trackSource?: string;
  trackId?: string;
  status?: string;
  fromMe?: boolean;
  messageType?: string;
  /** Newest first unless ascending. */
  ascending?: boolean;
  limit: number;
  offset: number;
}

/** The status rank of `messages.status` as SQL (-1 for Failed, Canceled, Deleted and unknown). */
export const RANK_SQL = `CASE messages.status ${Object.entries(STATUS_RANK)
  .map(([name, rank]) => `WHEN '${name}' THEN ${rank}`)
  .join(' ')} ELSE -1 END`;
/** The status rank of any status expression as SQL (-1 for the final ones and unknown). */
function rankOf(expression: string): string {
  return `CASE ${expression} ${Object.entries(STATUS_RANK)
    .map(([name, rank]) => `WHEN '${name}' THEN ${rank}`)
    .join(' ')} ELSE -1 END`;
}
/** Statuses a message never leaves. */
export const FINAL_SQL = `messages.status NOT IN ('Failed', 'Canceled', 'Deleted')`;
/** Content columns a later copy of a message refreshes when it has a value for them. */
const REFRESHED = [
  'chat_lid',
  'sender_pn',
  'sender_lid',
  'sender_name',
  'message_type',
  'type',
  'media_type',
  'text',
  'quoted',
  'edited',
  'reaction',
  'vote',
  'button_or_list_id',
  'content',
  'raw',
];

export function insertParts(message: NewMessage, first: number): { names: string[]; placeholders: string[]; values: unknown[] } {
  const names = COLUMNS.map(([, column]) => column);
  const values = COLUMNS.map(([field, column]) => {
    const value = message[field];
    return JSON_COLUMNS.has(column) ? (value === undefined || value === null ? null : JSON.stringify(value)) : value;
  });
  const placeholders = names.map((column, index) => (JSON_COLUMNS.has(column) ? `$${index + first}::jsonb` : `$${index + first}`));
  return { names, placeholders, values };
}

/** ON CONFLICT assignments: each REFRESHED column takes the later copy's value where it has one. */
export const REFRESH_SQL = REFRESHED.map(
  (column) => `${column} = CASE WHEN EXCLUDED.${column}::text <> '' THEN EXCLUDED.${column} ELSE messages.${column} END`,
).join(',\n  ');
/** ON CONFLICT assignment: the stored status moves forward to the copy's (never out of a final one). */
export const ADVANCE_STATUS_SQL = `status = CASE WHEN ${rankOf('EXCLUDED.status')} > ${RANK_SQL} AND ${FINAL_SQL} THEN EXCLUDED.status ELSE messages.status END`;

/**
 * A message as a row of the `messages` type, for jsonb_populate_recordset (a group's rows as one JSON
 * document): every column of COLUMNS, an absent value as null. One literal (see toRecordRow()).
 */
export function messageDocument(message: NewMessage): Raw {
  return {
    instance_id: message.instanceId ?? null,
    id: message.id ?? null,
    message_id: message.messageId ?? null,
    chat_id: message.chatId ?? null,
    chat_lid: message.chatLid ?? null,
    sender: message.sender ?? null,
    sender_pn: message.senderPn ?? null,
    sender_lid: message.senderLid ?? null,
    sender_name: message.senderName ?? null,
    is_group: message.isGroup ?? null,
    from_me: message.fromMe ?? null,
    message_type: message.messageType ?? null,
    type: message.type ?? null,
    media_type: message.mediaType ?? null,
    source: message.source ?? null,
    message_timestamp: message.messageTimestamp ?? null,
    status: message.status ?? null,
    text: message.text ?? null,
    quoted: message.quoted ?? null,
    edited: message.edited ?? null,
    reaction: message.reaction ?? null,
    vote: message.vote ?? null,
    convert_options: message.convertOptions ?? null,
    button_or_list_id: message.buttonOrListId ?? null,
    error: message.error ?? null,
    content: message.content ?? null,
    raw: message.raw ?? null,
    was_sent_by_api: message.wasSentByApi ?? null,
    pinned: message.pinned ?? null,
    send_function: message.sendFunction ?? null,
    send_payload: message.sendPayload ?? null,
    file_url: message.fileUrl ?? null,
    send_folder_id: message.sendFolderId ?? null,
    track_source: message.trackSource ?? null,
    track_id: message.trackId ?? null,
    call_peer: message.callPeer ?? null,
    ai_metadata: message.aiMetadata ?? null,
  };
}

/**
 * A stored message a send may claim with its reserve: never relayed. One relayed by a send that was cut
 * off before anything of it was stored back (no copy, no ack: its worker died between the mark and the
 * network) is taken over by the request that comes back for it, once the worker knows no send of its
 * own is at it (OutboundLedgerRepository.reclaimCutOff, ADR 0070): a reserve alone cannot know that,
 * and took such rows over after 30 s while a send stalled that long still relayed them.
 */
export const RELAYABLE_SQL = `(messages.relayed_at IS NULL)`;
