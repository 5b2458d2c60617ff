import type { DataSource, EntityManager } from 'typeorm';

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
  createdAt: Date;
  updatedAt: Date;
}

export type NewMessage = Omit<MessageRow, 'createdAt' | 'updatedAt'>;

/** Status order: a receipt may arrive twice or late; a message never moves backwards. */
export const STATUS_RANK: Record<string, number> = { Queued: 0, Pending: 1, Sent: 2, Delivered: 3, Read: 4, Played: 5 };

const COLUMNS: Array<[keyof NewMessage, string]> = [
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
];
const JSON_COLUMNS = new Set(['content', 'send_payload']);

type Raw = Record<string, unknown>;

export function toMessageRow(raw: Raw): MessageRow {
  const row: Record<string, unknown> = {};
  for (const [field, column] of COLUMNS) row[field] = raw[column];
  row.messageTimestamp = Number(raw.message_timestamp);
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

export class MessageRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Inserts a message, or when its provider id is already stored, refreshes the content fields and
   * keeps the more advanced status. Returns the stored row and whether it was new.
   */
  static async upsertWithin(manager: EntityManager, message: NewMessage): Promise<{ row: MessageRow; created: boolean }> {
    const names = COLUMNS.map(([, column]) => column);
    const values = COLUMNS.map(([field, column]) => {
      const value = message[field];
      return JSON_COLUMNS.has(column) ? (value === undefined || value === null ? null : JSON.stringify(value)) : value;
    });
    const placeholders = names.map((column, index) => (JSON_COLUMNS.has(column) ? `$${index + 1}::jsonb` : `$${index + 1}`));
    const refreshed = ['chat_lid', 'sender_pn', 'sender_lid', 'sender_name', 'message_type', 'type', 'media_type', 'text', 'quoted', 'edited', 'reaction', 'vote', 'button_or_list_id', 'content', 'raw'];
    const rows: Raw[] = await manager.query(
      `INSERT INTO messages (${names.join(', ')}) VALUES (${placeholders.join(', ')})
       ON CONFLICT (instance_id, message_id) DO UPDATE SET
         ${refreshed.map((column) => `${column} = CASE WHEN EXCLUDED.${column}::text <> '' THEN EXCLUDED.${column} ELSE messages.${column} END`).join(',\n         ')},
         updated_at = now()
       RETURNING *, (xmax = 0) AS created`,
      values,
    );
    return { row: toMessageRow(rows[0]), created: Boolean(rows[0].created) };
  }

  /**
   * Moves messages to a status if it is further along than the current one (Failed and Canceled are
   * final). Returns the rows that changed.
   */
  static async advanceStatusWithin(manager: EntityManager, instanceId: string, messageIds: string[], status: string): Promise<MessageRow[]> {
    const rank = STATUS_RANK[status];
    if (rank === undefined) return [];
    const ranks = Object.entries(STATUS_RANK);
    const rows: Raw[] = await manager.query(
      `WITH changed AS (
         UPDATE messages SET status = $3, updated_at = now()
         WHERE instance_id = $1 AND message_id = ANY($2::text[])
           AND COALESCE((SELECT r FROM (VALUES ${ranks.map((_, index) => `($${index * 2 + 5}::text, $${index * 2 + 6}::int)`).join(', ')}) AS s(n, r) WHERE s.n = messages.status), -1) < $4
           AND messages.status NOT IN ('Failed', 'Canceled', 'Deleted')
         RETURNING *)
       SELECT * FROM changed`,
      [instanceId, messageIds, status, rank, ...ranks.flat()],
    );
    return rows.map(toMessageRow);
  }

  /** A message by its provider id, inside a transaction (locked until commit when `forUpdate`). */
  static async findWithin(manager: EntityManager, instanceId: string, messageId: string, forUpdate = false): Promise<MessageRow | null> {
    const rows: Raw[] = await manager.query(`SELECT * FROM messages WHERE instance_id = $1 AND message_id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [instanceId, messageId]);
    return rows.length ? toMessageRow(rows[0]) : null;
  }

  /**
   * An edit arrived: the original now shows the new text and content, and `edited` names the edit
   * that changed it last. Null when the original is not stored.
   */
  static async applyEditWithin(manager: EntityManager, instanceId: string, messageId: string, edit: { text: string; content: unknown; editId: string }): Promise<MessageRow | null> {
    const rows: Raw[] = await manager.query(
      `WITH changed AS (
         UPDATE messages SET text = $3, content = $4::jsonb, edited = $5, updated_at = now()
         WHERE instance_id = $1 AND message_id = $2 RETURNING *)
       SELECT * FROM changed`,
      [instanceId, messageId, edit.text, edit.content === undefined ? null : JSON.stringify(edit.content), edit.editId],
    );
    return rows.length ? toMessageRow(rows[0]) : null;
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

  async findOne(instanceId: string, idOrMessageId: string): Promise<MessageRow | null> {
    const rows: Raw[] = await this.dataSource.query(`SELECT * FROM messages WHERE instance_id = $1 AND (id = $2 OR message_id = $2) LIMIT 1`, [instanceId, idOrMessageId]);
    return rows.length ? toMessageRow(rows[0]) : null;
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
      `SELECT * FROM messages WHERE ${clause} ORDER BY message_timestamp ${query.ascending ? 'ASC' : 'DESC'}, id LIMIT ${Math.trunc(query.limit)} OFFSET ${Math.trunc(query.offset)}`,
      params,
    );
    return { rows: rows.map(toMessageRow), total: Number(total) };
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
