import { PREPARED } from '../preparing-client';
import {
  ADVANCE_STATUS_SQL,
  COLUMNS,
  FINAL_SQL,
  insertParts,
  messageDocument,
  RANK_SQL,
  REFRESH_SQL,
  RELAYABLE_SQL,
  STATUS_RANK,
  toMessageRow,
  type MessageQuery,
  type MessageRow,
  type NewMessage,
  type Raw,
} from './message-row';
import { RepositoryBase, type Executor } from './repository-base';

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

/** Rows of one multi-row insert at most (insertNew). */
const INSERT_SLICE = 500;
const INSERT_NEW_SQL = `${PREPARED} WITH inserted AS (
  INSERT INTO messages (${COLUMNS.map(([, column]) => column).join(', ')})
  SELECT ${COLUMNS.map(([, column]) => `input.${column}`).join(', ')} FROM jsonb_populate_recordset(NULL::messages, $1::jsonb) AS input
  ON CONFLICT (instance_id, message_id) DO NOTHING
  RETURNING *)
  SELECT * FROM inserted`;
/** INSERT_NEW_SQL answering only what the table chose for each row (insertNewKeys). */
const INSERT_NEW_KEYS_SQL = INSERT_NEW_SQL.replace('RETURNING *', 'RETURNING messages.message_id, messages.id, messages.created_at, messages.updated_at');

/** What the table chose for a row insertNewKeys inserted: its record id (the trigger may replace a taken one) and its times. */
export interface InsertedKeys {
  messageId: string;
  id: string;
  createdAt: Date;
  updatedAt: Date;
}

export class MessageRepository extends RepositoryBase {
  /**
   * Inserts a message, or when its provider id is already stored, refreshes the content fields and
   * keeps the more advanced status. Returns the stored row and whether it was new.
   */
  async upsert(message: NewMessage): Promise<{ row: MessageRow; created: boolean }> {
    const manager = this.db;
    return (await MessageRepository.upsertRow(manager, message, false))!;
  }

  /**
   * upsert() for a copy received from WhatsApp: null, and nothing changed, when a copy of this
   * message is stored already (Baileys emits some messages twice). Saves reading the row first.
   */
  async storeCopy(message: NewMessage): Promise<{ row: MessageRow; created: boolean } | null> {
    const manager = this.db;
    return MessageRepository.upsertRow(manager, message, true);
  }

  /**
   * storeCopy() for a copy of our own message that also moves a stored row forward to the copy's
   * status (a receipt Baileys merged into the upsert), in the same statement instead of a second
   * advanceStatus() (one statement less per sent message, ADR 0012). Failed is not handled here.
   * `advanced` tells whether the stored status changed: the row's status before the statement is
   * read from its snapshot (the only other writer of the row meanwhile is the send's own result, Sent,
   * which is never announced).
   */
  async storeOwnCopy(message: NewMessage): Promise<{ row: MessageRow; created: boolean; advanced: boolean } | null> {
    const manager = this.db;
    const stored = await MessageRepository.upsertRow(manager, message, true, true);
    return stored ? { row: stored.row, created: stored.created, advanced: !stored.created && stored.priorStatus !== stored.row.status } : null;
  }

  private static async upsertRow(
    manager: Executor,
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
   * Inserts the messages not stored yet, many in one statement (a history chunk: issue #38), in slices
   * of INSERT_SLICE rows so a statement stays bounded. A message stored already (or twice in the input)
   * is left as it is and not answered: the caller takes its own path for it. Answers the rows inserted, as
   * stored: a record id already taken in the instance was given a fresh one by the table's trigger
   * (migration 1764490000000, ADR 0040), so the caller maps them back by message id, never by record id.
   */
  async insertNew(messages: ReadonlyArray<NewMessage>): Promise<MessageRow[]> {
    return (await this.insertSlices(INSERT_NEW_SQL, messages)).map(toMessageRow);
  }

  /**
   * insertNew() answering, for each row inserted, only what the table chose: its record id and its times
   * (the caller holds the rest, as it sent it). Returning every column of a history chunk's 1,000 rows
   * cost Postgres ~15 % of the statement and the worker their parsing (issue #38, bench/history).
   */
  async insertNewKeys(messages: ReadonlyArray<NewMessage>): Promise<InsertedKeys[]> {
    return (await this.insertSlices(INSERT_NEW_KEYS_SQL, messages)).map((row) => ({
      messageId: row.message_id as string,
      id: row.id as string,
      createdAt: row.created_at as Date,
      updatedAt: row.updated_at as Date,
    }));
  }

  /** `sql` over the messages in slices of INSERT_SLICE rows; the rows it returned, in order. */
  private async insertSlices(sql: string, messages: ReadonlyArray<NewMessage>): Promise<Raw[]> {
    const inserted: Raw[] = [];
    for (let from = 0; from < messages.length; from += INSERT_SLICE) {
      // The rows travel as one JSON document read with the table's own row type: one text for any number.
      const document = JSON.stringify(messages.slice(from, from + INSERT_SLICE).map(messageDocument));
      inserted.push(...((await this.db.query(sql, [document])) as Raw[]));
    }
    return inserted;
  }

  /**
   * Moves messages to a status if it is further along than the current one (Failed and Canceled are
   * final). Returns the rows that changed. The ids come through `(SELECT $2)`, which no plan can see
   * into: with the array itself Postgres found a plan made for each call's ids cheaper than its generic
   * one and planned every call again (test/message-status-plan.spec.ts).
   */
  async advanceStatus(instanceId: string, messageIds: string[], status: string): Promise<MessageRow[]> {
    const manager = this.db;
    const rank = STATUS_RANK[status];
    if (rank === undefined) return [];
    const rows: Raw[] = await manager.query(
      `${PREPARED} WITH changed AS (
         UPDATE messages SET status = $3, updated_at = now()
         WHERE instance_id = $1 AND message_id = ANY((SELECT $2::text[])::text[]) AND ${RANK_SQL} < $4 AND ${FINAL_SQL}
         RETURNING *)
       SELECT * FROM changed`,
      [instanceId, messageIds, status, rank],
    );
    return rows.map(toMessageRow);
  }

  /** A message by its provider id, inside a transaction (locked until commit when `forUpdate`). */
  async findByMessageId(instanceId: string, messageId: string, forUpdate = false): Promise<MessageRow | null> {
    const manager = this.db;
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
  async applyEdit(instanceId: string, messageId: string, edit: { text: string; content: unknown; editId: string }): Promise<MessageRow | null> {
    const manager = this.db;
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
  async setPinned(instanceId: string, messageId: string, pinned: boolean): Promise<void> {
    const manager = this.db;
    await manager.query(`UPDATE messages SET pinned = $3, updated_at = now() WHERE instance_id = $1 AND message_id = $2`, [instanceId, messageId, pinned]);
  }

  /** A revoke ("delete for everyone") arrived: the original's status becomes `Deleted` (final). */
  async markDeleted(instanceId: string, messageId: string): Promise<MessageRow | null> {
    const manager = this.db;
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
  async fail(instanceId: string, messageIds: string[], error: string): Promise<MessageRow[]> {
    const manager = this.db;
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
    await this.db.query(`UPDATE messages SET file_url = $3, updated_at = now() WHERE instance_id = $1 AND message_id = $2`, [instanceId, messageId, url]);
  }

  async findOne(instanceId: string, idOrMessageId: string): Promise<MessageRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM messages WHERE instance_id = $1 AND (id = $2 OR message_id = $2) LIMIT 1`, [
      instanceId,
      idOrMessageId,
    ]);
    return rows.length ? toMessageRow(rows[0]) : null;
  }

  /** The rows named by any of `ids` (record id or provider id), in one statement. */
  async findMany(instanceId: string, ids: string[]): Promise<MessageRow[]> {
    if (ids.length === 0) return [];
    const rows: Raw[] = await this.db.query(`SELECT * FROM messages WHERE instance_id = $1 AND (id = ANY($2::text[]) OR message_id = ANY($2::text[]))`, [
      instanceId,
      ids,
    ]);
    return rows.map(toMessageRow);
  }

  /** The stored row when this id was relayed to WhatsApp before (a send checks it before costly work such as a media upload). */
  async findRelayed(instanceId: string, messageId: string): Promise<MessageRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM messages WHERE instance_id = $1 AND message_id = $2 AND NOT ${RELAYABLE_SQL}`, [
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
   *
   * Read from `unacked_sends` (migration 1764510000000: a row per message that went out, written by a
   * trigger), never from all of the instances' messages: each of its rows old enough is looked up in
   * `messages` by its key, and the rows whose message no longer waits for its ack are deleted in the same
   * statement (only as read: a message relayed again meanwhile has a new `relayed_at` and keeps its row).
   * The message's copy (`raw`) is read for the rows answered only.
   */
  async findUnacked(instanceIds: string[], olderThanMs: number, limit: number): Promise<UnackedMessage[]> {
    if (instanceIds.length === 0) return [];
    const rows: Array<{ instance_id: string; message_id: string; chat_id: string; raw: string | null; age_ms: number; queued: boolean }> = await this.db.query(
      `WITH due AS MATERIALIZED (
         SELECT u.instance_id, u.message_id, u.relayed_at AS listed_at, m.relayed_at,
           coalesce(m.status = 'Pending' AND m.from_me AND m.relayed_at IS NOT NULL AND m.chat_id <> 'status@broadcast', false) AS waiting
         FROM unacked_sends u LEFT JOIN messages m ON m.instance_id = u.instance_id AND m.message_id = u.message_id
         WHERE u.instance_id = ANY($1::text[]) AND u.relayed_at < now() - $2 * interval '1 millisecond'),
       settled AS (
         DELETE FROM unacked_sends u USING due
         WHERE NOT due.waiting AND u.instance_id = due.instance_id AND u.message_id = due.message_id AND u.relayed_at = due.listed_at),
       oldest AS (
         SELECT instance_id, message_id, relayed_at FROM due
         WHERE waiting AND relayed_at < now() - $2 * interval '1 millisecond' ORDER BY relayed_at LIMIT $3)
       SELECT m.instance_id, m.message_id, m.chat_id, m.raw, (extract(epoch FROM now() - o.relayed_at) * 1000)::float8 AS age_ms,
         EXISTS (SELECT 1 FROM send_queue q WHERE q.instance_id = o.instance_id AND q.message_id = o.message_id) AS queued
       FROM oldest o JOIN messages m ON m.instance_id = o.instance_id AND m.message_id = o.message_id
       ORDER BY o.relayed_at`,
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
    const rows: Array<{ message_id: string; sender: string; is_group: boolean }> = await this.db.query(
      `SELECT message_id, sender, is_group FROM messages WHERE instance_id = $1 AND (chat_id = $2 OR chat_lid = $2) AND NOT from_me ORDER BY message_timestamp DESC LIMIT $3`,
      [instanceId, chatJid, limit],
    );
    return rows.map((row) => ({ messageId: row.message_id, sender: row.sender, isGroup: row.is_group }));
  }

  /** Which of these provider ids are stored for the instance. */
  async storedIds(instanceId: string, messageIds: string[]): Promise<string[]> {
    const manager = this.db;
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
    const [{ total }]: Array<{ total: string }> = await this.db.query(`SELECT count(*) AS total FROM messages WHERE ${clause}`, params);
    const rows: Raw[] = await this.db.query(
      // Bound, never pasted: a number is only ever a value here, whatever its size.
      `SELECT * FROM messages WHERE ${clause} ORDER BY message_timestamp ${query.ascending ? 'ASC' : 'DESC'}, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, Math.trunc(query.limit), Math.trunc(query.offset)],
    );
    return { rows: rows.map(toMessageRow), total: Number(total) };
  }

  /** `/chat/delete` deleteMessagesDB: removes the chat's stored messages (by its number or LID), but sends still queued; how many went. */
  async deleteForChat(instanceId: string, jids: string[]): Promise<number> {
    const rows: Array<{ n: number }> = await this.db.query(
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
      const rows: Raw[] = await this.db.query(
        `WITH gone AS (DELETE FROM messages WHERE ctid IN (SELECT ctid FROM messages WHERE created_at < $1 LIMIT $2) RETURNING 1) SELECT count(*)::int AS n FROM gone`,
        [cutoff, batch],
      );
      const n = Number(rows[0].n);
      removed += n;
      if (n < batch) return removed;
    }
  }
}
