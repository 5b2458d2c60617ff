import type { DataSource, EntityManager } from 'typeorm';

export interface NewOutboxEvent {
  eventType: string;
  chatId?: string;
  payload: Record<string, unknown>;
}

export interface OutboxRow {
  id: string;
  instanceId: string;
  eventType: string;
  chatId: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

/** The event outbox: rows are written with the change that caused them, read in id order. */
export class OutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Inserts events inside the caller's transaction; returns the id of the last one (null if none). */
  static async insertWithin(manager: EntityManager, instanceId: string, events: NewOutboxEvent[]): Promise<string | null> {
    if (events.length === 0) return null;
    const rows: Array<{ id: string }> = await manager.query(
      `INSERT INTO outbox_events (instance_id, event_type, chat_id, payload)
       SELECT $1, e, c, p::jsonb FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS u(e, c, p, n)
       ORDER BY n
       RETURNING id`,
      [instanceId, events.map((e) => e.eventType), events.map((e) => e.chatId ?? ''), events.map((e) => JSON.stringify(e.payload))],
    );
    return rows.length ? String(rows[rows.length - 1].id) : null;
  }

  /** Events after `afterId`, optionally for one instance, oldest first. */
  async readAfter(afterId: string, limit: number, instanceId?: string): Promise<OutboxRow[]> {
    const rows: Array<{ id: string; instance_id: string; event_type: string; chat_id: string; payload: Record<string, unknown>; created_at: Date }> =
      await this.dataSource.query(
        `SELECT id, instance_id, event_type, chat_id, payload, created_at FROM outbox_events
         WHERE id > $1 AND ($3::text IS NULL OR instance_id = $3)
         ORDER BY id LIMIT $2`,
        [afterId, limit, instanceId ?? null],
      );
    return rows.map((row) => ({
      id: String(row.id),
      instanceId: row.instance_id,
      eventType: row.event_type,
      chatId: row.chat_id,
      payload: row.payload,
      createdAt: row.created_at,
    }));
  }
}
