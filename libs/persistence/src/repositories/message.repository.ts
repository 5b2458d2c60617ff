import type { DataSource, EntityManager } from 'typeorm';
import { LeaseRepository, type Lease } from './lease.repository';
import { PREPARED } from '../preparing-client';

/** What a status change (a receipt) reports of each message it moved: see InboundGroupRepository.writeWithin(). */
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

export function toMessageRow(raw: Raw): MessageRow {
  const row: Record<string, unknown> = {};
  for (const [field, column] of COLUMNS) row[field] = raw[column];
  row.messageTimestamp = Number(raw.message_timestamp);
  row.callPeer = (raw.call_peer as CallPeer | undefined) ?? null;
  row.aiMetadata = (raw.ai_metadata as Record<string, unknown> | undefined) ?? null;
  row.createdAt = raw.created_at;
  row.updatedAt = raw.updated_at;
  return row as unknown as MessageRow;
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

function insertParts(message: NewMessage, first: number): { names: string[]; placeholders: string[]; values: unknown[] } {
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

/** A message as a row of the `messages` type, for jsonb_populate_recordset (a group's rows as one JSON document). */
export function messageDocument(message: NewMessage): Raw {
  const row: Raw = {};
  for (const [field, column] of COLUMNS) row[column] = message[field] ?? null;
  return row;
}

/** Runs SQL: a DataSource, or an EntityManager inside a transaction. */
type Queryable = Pick<DataSource, 'query'>;

/**
 * The final SELECT of a group statement (fenceManyCte): the rows of CTE `cte`, and `held_instances`,
 * the instances whose lease held, on one row only (the array of every instance of the group repeated
 * on each row was most of the bytes such a statement returned: ~1 KB per row at 50 instances). Read
 * back with heldInstances().
 */
function selectWithHeldInstances(cte: string): string {
  return `SELECT CASE WHEN row_number() OVER () = 1 THEN held.held_instances END AS held_instances, ${cte}.*
       FROM (SELECT coalesce(array_agg(instance_id), '{}') AS held_instances FROM lease) AS held LEFT JOIN ${cte} ON true`;
}

/** The instances whose lease held, from a statement ending in selectWithHeldInstances(). */
function heldInstances(rows: Raw[]): Set<string> {
  const row = rows.find((raw) => raw.held_instances !== null && raw.held_instances !== undefined);
  return new Set<string>((row?.held_instances as string[] | undefined) ?? []);
}

/**
 * A stored message a send may (re)claim: never relayed, or relayed long ago by a send that was cut off
 * before anything of it was stored back (no copy, no ack: a crash between the mark and the network).
 * WhatsApp knows a message by its id, so relaying it again cannot show it twice.
 */
const RELAYABLE_SQL = `(messages.relayed_at IS NULL OR (messages.status = 'Pending' AND messages.raw IS NULL AND messages.relayed_at < now() - interval '30 seconds'))`;

/** A message of ours the server has not acked (MessageRepository.findUnacked). */
export interface UnackedMessage {
  instanceId: string;
  messageId: string;
  chatId: string;
  /** Its stored copy (BufferJSON), what a resend relays; null when none was stored. */
  raw: string | null;
  /** Since it was relayed. */
  ageMs: number;
  /** The async queue still holds its send. */
  queued: boolean;
}

/** A reserve's answer: whether the lease held, and whether the id was reserved (false: relayed before). */
export interface Reserved {
  held: boolean;
  reserved: boolean;
}

/**
 * The send path's writes, each one fenced statement (see LeaseRepository.fenceCte): a send costs two
 * round trips to the store, not three transactions.
 */
export class OutboundLedgerRepository {
  /**
   * Reserves a message id for a send: the row is stored `Pending` (a row queued earlier keeps its id
   * and takes the send's fields), and with `relay` it is marked relayed in the same statement. Nothing
   * changes when the id was relayed before (unless that send was cut off: RELAYABLE_SQL): `reserved` is then false (the caller answers from the
   * store). The row itself is not read back: the send answers with the row its result writes.
   */
  static async reserve(db: Queryable, lease: Lease, message: NewMessage, relay: boolean): Promise<Reserved> {
    const { names, placeholders, values } = insertParts(message, 5);
    const rows: Raw[] = await db.query(
      `WITH ${LeaseRepository.fenceCte(1)},
       reserved AS (
         INSERT INTO messages (${names.join(', ')}, relayed_at)
         SELECT ${placeholders.join(', ')}, CASE WHEN $4::boolean THEN now() END WHERE EXISTS (SELECT 1 FROM lease)
         ON CONFLICT (instance_id, message_id) DO UPDATE SET
           ${REFRESH_SQL},
           status = 'Pending', was_sent_by_api = true, send_function = EXCLUDED.send_function, send_payload = EXCLUDED.send_payload,
           track_source = EXCLUDED.track_source, track_id = EXCLUDED.track_id, send_folder_id = EXCLUDED.send_folder_id,
           relayed_at = EXCLUDED.relayed_at, updated_at = now()
         WHERE ${RELAYABLE_SQL}
         RETURNING message_id)
       SELECT held.held, reserved.message_id FROM (SELECT (SELECT count(*) FROM lease)::int AS held) AS held LEFT JOIN reserved ON true`,
      [...LeaseRepository.fenceParams(lease), relay, ...values],
    );
    const first = rows[0];
    return { held: Boolean(first?.held), reserved: Boolean(first?.message_id) };
  }

  /**
   * reserve() for many sends of any instances of this worker in ONE statement (group commit, ADR 0012):
   * one round trip and one commit for the group. The fence holds per instance: the `lease` CTE locks
   * the lease row of every instance whose lease (worker, fencing token) is still live FOR KEY SHARE, and
   * only their rows are written; the others answer `held: false`. The rows travel as one JSON document
   * read with the table's own row type (no 40 parameters per send). Callers never put the same message
   * twice in one group (a multi-row upsert may not touch a row twice; the statement would fail).
   * Answers in the order of `items`.
   */
  static async reserveMany(db: Queryable, items: ReadonlyArray<{ lease: Lease; message: NewMessage; relay: boolean }>): Promise<Reserved[]> {
    const names = COLUMNS.map(([, column]) => column);
    const messages = items.map(({ message }) => messageDocument(message));
    const relay = items.filter((item) => item.relay);
    const rows: Raw[] = await db.query(
      `${PREPARED} WITH ${LeaseRepository.fenceManyCte()},
       reserved AS (
         INSERT INTO messages (${names.join(', ')}, relayed_at)
         SELECT ${names.map((column) => `input.${column}`).join(', ')},
           CASE WHEN (input.instance_id, input.message_id) IN (SELECT * FROM unnest($5::text[], $6::text[])) THEN now() END
         FROM jsonb_populate_recordset(NULL::messages, $4::jsonb) AS input
         WHERE input.instance_id IN (SELECT instance_id FROM lease)
         ORDER BY input.instance_id, input.message_id
         ON CONFLICT (instance_id, message_id) DO UPDATE SET
           ${REFRESH_SQL},
           status = 'Pending', was_sent_by_api = true, send_function = EXCLUDED.send_function, send_payload = EXCLUDED.send_payload,
           track_source = EXCLUDED.track_source, track_id = EXCLUDED.track_id, send_folder_id = EXCLUDED.send_folder_id,
           relayed_at = EXCLUDED.relayed_at, updated_at = now()
         WHERE ${RELAYABLE_SQL}
         RETURNING instance_id, message_id)
       ${selectWithHeldInstances('reserved')}`,
      [
        ...LeaseRepository.fenceManyParams(items.map((item) => item.lease)),
        JSON.stringify(messages),
        relay.map((item) => item.message.instanceId),
        relay.map((item) => item.message.messageId),
      ],
    );
    const held = heldInstances(rows);
    const reserved = new Set(rows.filter((raw) => raw.message_id).map((raw) => `${String(raw.instance_id)}\u0000${String(raw.message_id)}`));
    return items.map(({ message }) => ({
      held: held.has(message.instanceId),
      reserved: reserved.has(`${message.instanceId}\u0000${message.messageId}`),
    }));
  }

  /**
   * settle() for many sends of any instances in ONE statement (group commit), fenced per instance as
   * reserveMany(). A message further along already (a receipt came first) is read back in a second
   * statement, as settle() does, only when there is one.
   */
  static async settleMany(
    db: Queryable,
    items: ReadonlyArray<{ lease: Lease; messageId: string; outcome: { status: 'Sent' } | { status: 'Failed'; error: string } }>,
  ): Promise<Array<{ held: boolean; row: MessageRow | null }>> {
    const rows: Raw[] = await db.query(
      `${PREPARED} WITH ${LeaseRepository.fenceManyCte()},
       input AS (SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) AS u(instance_id, message_id, status, error)),
       changed AS (
         UPDATE messages SET status = input.status, error = CASE WHEN input.status = 'Failed' THEN input.error ELSE messages.error END, updated_at = now()
         FROM input
         WHERE messages.instance_id = input.instance_id AND messages.message_id = input.message_id
           AND input.instance_id IN (SELECT instance_id FROM lease) AND ${FINAL_SQL}
           AND CASE WHEN input.status = 'Sent' THEN ${RANK_SQL} < ${STATUS_RANK.Sent} ELSE ${RANK_SQL} <= ${STATUS_RANK.Sent} END
         RETURNING messages.*)
       ${selectWithHeldInstances('changed')}`,
      [
        ...LeaseRepository.fenceManyParams(items.map((item) => item.lease)),
        items.map((item) => item.lease.instanceId),
        items.map((item) => item.messageId),
        items.map((item) => item.outcome.status),
        items.map((item) => (item.outcome.status === 'Failed' ? item.outcome.error : '')),
      ],
    );
    const held = heldInstances(rows);
    const key = (instanceId: string, messageId: string) => `${instanceId}\u0000${messageId}`;
    const byKey = new Map(rows.filter((raw) => raw.message_id).map((raw) => [key(String(raw.instance_id), String(raw.message_id)), toMessageRow(raw)]));
    // Unchanged (further along already): read in a statement of its own, whose snapshot sees the write
    // this one may have waited for (see settle()).
    const unchanged = items.filter((item) => held.has(item.lease.instanceId) && !byKey.has(key(item.lease.instanceId, item.messageId)));
    if (unchanged.length) {
      const current: Raw[] = await db.query(
        `SELECT m.* FROM messages m JOIN unnest($1::text[], $2::text[]) AS k(instance_id, message_id) ON m.instance_id = k.instance_id AND m.message_id = k.message_id`,
        [unchanged.map((item) => item.lease.instanceId), unchanged.map((item) => item.messageId)],
      );
      for (const raw of current) byKey.set(key(String(raw.instance_id), String(raw.message_id)), toMessageRow(raw));
    }
    return items.map((item) => ({ held: held.has(item.lease.instanceId), row: byKey.get(key(item.lease.instanceId, item.messageId)) ?? null }));
  }

  /**
   * Marks a reserved message relayed (a send with a typing delay reserves first, relays after): `relayed`
   * for the one request that marks it, `already` when another request with the same id marked it first
   * (it relays the message; this one must not), `fenced` when the lease is gone.
   */
  static async markRelayed(db: Queryable, lease: Lease, messageId: string): Promise<'relayed' | 'already' | 'fenced'> {
    const rows: Array<{ held: number; marked: number }> = await db.query(
      `WITH ${LeaseRepository.fenceCte(1)},
       marked AS (UPDATE messages SET relayed_at = now()
                  WHERE instance_id = $1 AND message_id = $4 AND relayed_at IS NULL AND EXISTS (SELECT 1 FROM lease) RETURNING 1)
       SELECT (SELECT count(*) FROM lease)::int AS held, (SELECT count(*) FROM marked)::int AS marked`,
      [...LeaseRepository.fenceParams(lease), messageId],
    );
    if (!rows[0]?.held) return 'fenced';
    return rows[0].marked ? 'relayed' : 'already';
  }

  /**
   * Keeps the copy of a message as it went out (`raw`, BufferJSON), when none is stored: the unacked
   * sweep resends it from there. False when the lease is gone.
   */
  static async keepCopy(db: Queryable, lease: Lease, messageId: string, raw: string): Promise<boolean> {
    const rows: Array<{ held: number }> = await db.query(
      `WITH ${LeaseRepository.fenceCte(1)},
       changed AS (UPDATE messages SET raw = $5 WHERE instance_id = $1 AND message_id = $4 AND raw IS NULL AND EXISTS (SELECT 1 FROM lease) RETURNING 1)
       SELECT (SELECT count(*) FROM lease)::int AS held`,
      [...LeaseRepository.fenceParams(lease), messageId, raw],
    );
    return Boolean(rows[0]?.held);
  }

  /**
   * Undoes markRelayed() for a message that never reached WhatsApp (the connection went away before
   * the relay finished): the queue's next attempt with the same id relays it. Only while it is
   * still Pending; false when the lease is gone.
   */
  static async unrelay(db: Queryable, lease: Lease, messageId: string): Promise<boolean> {
    const rows: Array<{ held: number }> = await db.query(
      `WITH ${LeaseRepository.fenceCte(1)},
       changed AS (UPDATE messages SET relayed_at = NULL, updated_at = now()
                   WHERE instance_id = $1 AND message_id = $4 AND status = 'Pending' AND EXISTS (SELECT 1 FROM lease) RETURNING 1)
       SELECT (SELECT count(*) FROM lease)::int AS held`,
      [...LeaseRepository.fenceParams(lease), messageId],
    );
    return Boolean(rows[0]?.held);
  }

  /**
   * The server's answer to a send: Sent (only forward: a receipt may have come first) or Failed with
   * its error (unless it was delivered already). Returns the row as it is afterwards.
   */
  static async settle(
    db: Queryable,
    lease: Lease,
    messageId: string,
    outcome: { status: 'Sent' } | { status: 'Failed'; error: string },
  ): Promise<{ held: boolean; row: MessageRow | null }> {
    const change =
      outcome.status === 'Sent'
        ? `SET status = 'Sent', updated_at = now() WHERE ${RANK_SQL} < ${STATUS_RANK.Sent} AND ${FINAL_SQL}`
        : `SET status = 'Failed', error = $5, updated_at = now() WHERE ${RANK_SQL} <= ${STATUS_RANK.Sent} AND ${FINAL_SQL}`;
    const rows: Raw[] = await db.query(
      `WITH ${LeaseRepository.fenceCte(1)},
       changed AS (
         UPDATE messages ${change} AND instance_id = $1 AND message_id = $4 AND EXISTS (SELECT 1 FROM lease)
         RETURNING *)
       SELECT held.held, changed.* FROM (SELECT (SELECT count(*) FROM lease)::int AS held) AS held LEFT JOIN changed ON true`,
      [...LeaseRepository.fenceParams(lease), messageId, ...(outcome.status === 'Failed' ? [outcome.error] : [])],
    );
    const first = rows[0];
    if (!first?.held || first.message_id) return { held: Boolean(first?.held), row: first?.message_id ? toMessageRow(first) : null };
    // Nothing changed: the row is further along already. Read it in a statement of its own: this
    // statement's snapshot predates a write it may have waited for (a receipt), and would show the row
    // as it was before that.
    const current: Raw[] = await db.query(`SELECT * FROM messages WHERE instance_id = $1 AND message_id = $2`, [lease.instanceId, messageId]);
    return { held: true, row: current.length ? toMessageRow(current[0]) : null };
  }

  /** The server acked messages we sent: Sent, if nothing further along was recorded. */
  static async acked(db: Queryable, lease: Lease, messageIds: string[]): Promise<boolean> {
    const rows: Array<{ held: number }> = await db.query(
      `WITH ${LeaseRepository.fenceCte(1)},
       changed AS (
         UPDATE messages SET status = 'Sent', updated_at = now()
         WHERE instance_id = $1 AND message_id = ANY($4::text[]) AND from_me AND ${RANK_SQL} < ${STATUS_RANK.Sent} AND ${FINAL_SQL}
           AND EXISTS (SELECT 1 FROM lease))
       SELECT (SELECT count(*) FROM lease)::int AS held`,
      [...LeaseRepository.fenceParams(lease), messageIds],
    );
    return Boolean(rows[0]?.held);
  }
}

export class MessageRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Inserts a message, or when its provider id is already stored, refreshes the content fields and
   * keeps the more advanced status. Returns the stored row and whether it was new.
   */
  static async upsertWithin(manager: EntityManager, message: NewMessage): Promise<{ row: MessageRow; created: boolean }> {
    return (await MessageRepository.upsertRow(manager, message, false))!;
  }

  /**
   * upsertWithin() for a copy received from WhatsApp: null, and nothing changed, when a copy of this
   * message is stored already (Baileys emits some messages twice). Saves reading the row first.
   */
  static async storeCopyWithin(manager: EntityManager, message: NewMessage): Promise<{ row: MessageRow; created: boolean } | null> {
    return MessageRepository.upsertRow(manager, message, true);
  }

  /**
   * storeCopyWithin() for a copy of our own message that also moves a stored row forward to the copy's
   * status (a receipt Baileys merged into the upsert), in the same statement instead of a second
   * advanceStatusWithin() (one statement less per sent message, ADR 0012). Failed is not handled here.
   * `advanced` tells whether the stored status changed: the row's status before the statement is
   * read from its snapshot (the only other writer of the row meanwhile is the send's own result, Sent,
   * which is never announced).
   */
  static async storeOwnCopyWithin(manager: EntityManager, message: NewMessage): Promise<{ row: MessageRow; created: boolean; advanced: boolean } | null> {
    const stored = await MessageRepository.upsertRow(manager, message, true, true);
    return stored ? { row: stored.row, created: stored.created, advanced: !stored.created && stored.priorStatus !== stored.row.status } : null;
  }

  private static async upsertRow(
    manager: EntityManager,
    message: NewMessage,
    unlessCopyStored: boolean,
    advanceStatus = false,
  ): Promise<{ row: MessageRow; created: boolean; priorStatus: string | null } | null> {
    const { names, placeholders, values } = insertParts(message, 1);
    const messageId = COLUMNS.findIndex(([, column]) => column === 'message_id') + 1;
    const rows: Raw[] = await manager.query(
      `${PREPARED} WITH ${advanceStatus ? `prior AS (SELECT status FROM messages WHERE instance_id = $1 AND message_id = $${messageId}),` : ''}
       upserted AS (
       INSERT INTO messages (${names.join(', ')}) VALUES (${placeholders.join(', ')})
       ON CONFLICT (instance_id, message_id) DO UPDATE SET
         ${REFRESH_SQL},
         ${advanceStatus ? `${ADVANCE_STATUS_SQL},` : ''}
         updated_at = now()
       ${unlessCopyStored ? 'WHERE messages.raw IS NULL' : ''}
       RETURNING *, (xmax = 0) AS created)
       SELECT upserted.*${advanceStatus ? ', (SELECT status FROM prior) AS prior_status' : ''} FROM upserted`,
      values,
    );
    return rows.length
      ? { row: toMessageRow(rows[0]), created: Boolean(rows[0].created), priorStatus: (rows[0].prior_status as string | undefined) ?? null }
      : null;
  }

  /**
   * Moves messages to a status if it is further along than the current one (Failed and Canceled are
   * final). Returns the rows that changed.
   */
  static async advanceStatusWithin(manager: EntityManager, instanceId: string, messageIds: string[], status: string): Promise<MessageRow[]> {
    const rank = STATUS_RANK[status];
    if (rank === undefined) return [];
    const rows: Raw[] = await manager.query(
      `${PREPARED} WITH changed AS (
         UPDATE messages SET status = $3, updated_at = now()
         WHERE instance_id = $1 AND message_id = ANY($2::text[]) AND ${RANK_SQL} < $4 AND ${FINAL_SQL}
         RETURNING *)
       SELECT * FROM changed`,
      [instanceId, messageIds, status, rank],
    );
    return rows.map(toMessageRow);
  }

  /** A message by its provider id, inside a transaction (locked until commit when `forUpdate`). */
  static async findWithin(manager: EntityManager, instanceId: string, messageId: string, forUpdate = false): Promise<MessageRow | null> {
    const rows: Raw[] = await manager.query(`${PREPARED} SELECT * FROM messages WHERE instance_id = $1 AND message_id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [
      instanceId,
      messageId,
    ]);
    return rows.length ? toMessageRow(rows[0]) : null;
  }

  /**
   * An edit arrived: the original now shows the new text and content, and `edited` names the edit
   * that changed it last. Null when the original is not stored.
   */
  static async applyEditWithin(
    manager: EntityManager,
    instanceId: string,
    messageId: string,
    edit: { text: string; content: unknown; editId: string },
  ): Promise<MessageRow | null> {
    const rows: Raw[] = await manager.query(
      `WITH changed AS (
         UPDATE messages SET text = $3, content = $4::jsonb, edited = $5, updated_at = now()
         WHERE instance_id = $1 AND message_id = $2 RETURNING *)
       SELECT * FROM changed`,
      [instanceId, messageId, edit.text, edit.content === undefined ? null : JSON.stringify(edit.content), edit.editId],
    );
    return rows.length ? toMessageRow(rows[0]) : null;
  }

  /** The API pinned or unpinned the message in its chat (`POST /message/pin`). */
  static async setPinnedWithin(manager: EntityManager, instanceId: string, messageId: string, pinned: boolean): Promise<void> {
    await manager.query(`UPDATE messages SET pinned = $3, updated_at = now() WHERE instance_id = $1 AND message_id = $2`, [instanceId, messageId, pinned]);
  }

  /** A revoke ("delete for everyone") arrived: the original's status becomes `Deleted` (final). */
  static async markDeletedWithin(manager: EntityManager, instanceId: string, messageId: string): Promise<MessageRow | null> {
    const rows: Raw[] = await manager.query(
      `WITH changed AS (
         UPDATE messages SET status = 'Deleted', updated_at = now()
         WHERE instance_id = $1 AND message_id = $2 AND status <> 'Deleted' RETURNING *)
       SELECT * FROM changed`,
      [instanceId, messageId],
    );
    return rows.length ? toMessageRow(rows[0]) : null;
  }

  /**
   * WhatsApp refused messages (error ack): `Failed` with the reason, unless they were already
   * delivered (a late error cannot undo a receipt) or are final. Returns the rows that changed.
   */
  static async failWithin(manager: EntityManager, instanceId: string, messageIds: string[], error: string): Promise<MessageRow[]> {
    const rows: Raw[] = await manager.query(
      `WITH changed AS (
         UPDATE messages SET status = 'Failed', error = $3, updated_at = now()
         WHERE instance_id = $1 AND message_id = ANY($2::text[]) AND status IN ('', 'Queued', 'Pending', 'Sent')
         RETURNING *)
       SELECT * FROM changed`,
      [instanceId, messageIds, error],
    );
    return rows.map(toMessageRow);
  }

  /** The message's file is kept at `url` (a media download stored it): the record's `fileURL`. */
  async setFileUrl(instanceId: string, messageId: string, url: string): Promise<void> {
    await this.dataSource.query(`UPDATE messages SET file_url = $3, updated_at = now() WHERE instance_id = $1 AND message_id = $2`, [
      instanceId,
      messageId,
      url,
    ]);
  }

  async findOne(instanceId: string, idOrMessageId: string): Promise<MessageRow | null> {
    const rows: Raw[] = await this.dataSource.query(`SELECT * FROM messages WHERE instance_id = $1 AND (id = $2 OR message_id = $2) LIMIT 1`, [
      instanceId,
      idOrMessageId,
    ]);
    return rows.length ? toMessageRow(rows[0]) : null;
  }

  /** The rows named by any of `ids` (record id or provider id), in one statement. */
  async findMany(instanceId: string, ids: string[]): Promise<MessageRow[]> {
    if (ids.length === 0) return [];
    const rows: Raw[] = await this.dataSource.query(
      `SELECT * FROM messages WHERE instance_id = $1 AND (id = ANY($2::text[]) OR message_id = ANY($2::text[]))`,
      [instanceId, ids],
    );
    return rows.map(toMessageRow);
  }

  /** The stored row when this id was relayed to WhatsApp before (a send checks it before costly work such as a media upload). */
  async findRelayed(instanceId: string, messageId: string): Promise<MessageRow | null> {
    const rows: Raw[] = await this.dataSource.query(`SELECT * FROM messages WHERE instance_id = $1 AND message_id = $2 AND NOT ${RELAYABLE_SQL}`, [
      instanceId,
      messageId,
    ]);
    return rows.length ? toMessageRow(rows[0]) : null;
  }

  /**
   * Our messages that went out at least `olderThanMs` ago and that the server never acked (still
   * Pending), of these instances, oldest first: what the unacked sweep resends or fails. `queued`:
   * the async queue still holds the send (it retries it itself). Statuses are left out (a resend
   * needs the recipients list only the send had).
   */
  async findUnacked(instanceIds: string[], olderThanMs: number, limit: number): Promise<UnackedMessage[]> {
    if (instanceIds.length === 0) return [];
    const rows: Array<{ instance_id: string; message_id: string; chat_id: string; raw: string | null; age_ms: number; queued: boolean }> =
      await this.dataSource.query(
        `SELECT m.instance_id, m.message_id, m.chat_id, m.raw, (extract(epoch FROM now() - m.relayed_at) * 1000)::float8 AS age_ms,
                EXISTS (SELECT 1 FROM send_queue q WHERE q.instance_id = m.instance_id AND q.message_id = m.message_id) AS queued
           FROM messages m
          WHERE m.instance_id = ANY($1::text[]) AND m.status = 'Pending' AND m.from_me AND m.relayed_at IS NOT NULL
            AND m.relayed_at < now() - $2 * interval '1 millisecond' AND m.chat_id <> 'status@broadcast'
          ORDER BY m.relayed_at LIMIT $3`,
        [instanceIds, olderThanMs, limit],
      );
    return rows.map((row) => ({
      instanceId: row.instance_id,
      messageId: row.message_id,
      chatId: row.chat_id,
      raw: row.raw,
      ageMs: Number(row.age_ms),
      queued: row.queued,
    }));
  }

  /** Keys of the last received messages of a chat (PN or LID), newest first (readmessages marks the last ones read). */
  async lastReceivedKeys(instanceId: string, chatJid: string, limit: number): Promise<Array<{ messageId: string; sender: string; isGroup: boolean }>> {
    const rows: Array<{ message_id: string; sender: string; is_group: boolean }> = await this.dataSource.query(
      `SELECT message_id, sender, is_group FROM messages WHERE instance_id = $1 AND (chat_id = $2 OR chat_lid = $2) AND NOT from_me ORDER BY message_timestamp DESC LIMIT $3`,
      [instanceId, chatJid, limit],
    );
    return rows.map((row) => ({ messageId: row.message_id, sender: row.sender, isGroup: row.is_group }));
  }

  /** Which of these provider ids are stored for the instance. */
  static async storedIdsWithin(manager: EntityManager, instanceId: string, messageIds: string[]): Promise<string[]> {
    const rows: Array<{ message_id: string }> = await manager.query(`SELECT message_id FROM messages WHERE instance_id = $1 AND message_id = ANY($2::text[])`, [
      instanceId,
      messageIds,
    ]);
    return rows.map((row) => row.message_id);
  }

  async find(instanceId: string, query: MessageQuery): Promise<{ rows: MessageRow[]; total: number }> {
    const where = ['instance_id = $1'];
    const params: unknown[] = [instanceId];
    // `$?` stands for the value being added, wherever it appears in the condition.
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replaceAll('$?', `$${params.length}`));
    };
    if (query.id) add('(id = $? OR message_id = $?)', query.id);
    if (query.messageId) add('message_id = $?', query.messageId);
    if (query.chatId) add('(chat_id = $? OR chat_lid = $?)', query.chatId);
    if (query.trackSource) add('track_source = $?', query.trackSource);
    if (query.trackId) add('track_id = $?', query.trackId);
    if (query.status) add('lower(status) = lower($?)', query.status);
    if (query.fromMe !== undefined) add('from_me = $?', query.fromMe);
    if (query.messageType) add('message_type = $?', query.messageType);
    const clause = where.join(' AND ');
    const [{ total }]: Array<{ total: string }> = await this.dataSource.query(`SELECT count(*) AS total FROM messages WHERE ${clause}`, params);
    const rows: Raw[] = await this.dataSource.query(
      // Bound, never pasted: a number is only ever a value here, whatever its size.
      `SELECT * FROM messages WHERE ${clause} ORDER BY message_timestamp ${query.ascending ? 'ASC' : 'DESC'}, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, Math.trunc(query.limit), Math.trunc(query.offset)],
    );
    return { rows: rows.map(toMessageRow), total: Number(total) };
  }

  /** `/chat/delete` deleteMessagesDB: removes the chat's stored messages (by its number or LID), but sends still queued; how many went. */
  async deleteForChat(instanceId: string, jids: string[]): Promise<number> {
    const rows: Array<{ n: number }> = await this.dataSource.query(
      `WITH gone AS (DELETE FROM messages WHERE instance_id = $1 AND (chat_id = ANY($2::text[]) OR chat_lid = ANY($2::text[])) AND status <> 'Queued' RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [instanceId, jids],
    );
    return Number(rows[0].n);
  }

  /** Deletes messages older than the retention; returns how many went. */
  async purgeOlderThan(cutoff: Date, batch = 5_000): Promise<number> {
    let removed = 0;
    for (;;) {
      const rows: Raw[] = await this.dataSource.query(
        `WITH gone AS (DELETE FROM messages WHERE ctid IN (SELECT ctid FROM messages WHERE created_at < $1 LIMIT $2) RETURNING 1) SELECT count(*)::int AS n FROM gone`,
        [cutoff, batch],
      );
      const n = Number(rows[0].n);
      removed += n;
      if (n < batch) return removed;
    }
  }
}
