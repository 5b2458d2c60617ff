import type { DataSource, EntityManager } from 'typeorm';
import { OutboxRepository, type OutboxPosition, type OutboxRow } from './outbox.repository';

/** What one step of a consumer over one instance did. */
export interface CursorStep {
  /** Another process holds this (consumer, instance) cursor right now; nothing was read. */
  busy: boolean;
  /** Events the cursor moved past (handed to the handler or filtered out). */
  read: number;
  /** More events may be ready at once (a full batch, or committed rows waiting behind a running transaction). */
  more: boolean;
}

export type CursorHandler = (manager: EntityManager, instanceId: string, events: OutboxRow[]) => Promise<void>;

/**
 * Durable outbox consumers: one cursor per (consumer, instance) in `outbox_cursors` (migration
 * 1764090000000). A step locks the cursor row with `SKIP LOCKED`, reads the settled events after it,
 * lets the handler write its work rows with the same transaction, and moves the cursor past what it read:
 * the events become work exactly once, and a crash before the commit leaves the cursor where it was.
 */
export class OutboxCursorRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Follows exactly `instanceIds` for `consumer`: a new one starts at the current end of its outbox
   * (events already settled are not replayed; those of transactions still running are read), and the
   * cursors of instances no longer followed are dropped, so following again later starts afresh.
   */
  async follow(consumer: string, instanceIds: string[]): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`DELETE FROM outbox_cursors WHERE consumer = $1 AND NOT (instance_id = ANY($2::text[]))`, [consumer, instanceIds]);
      if (instanceIds.length === 0) return;
      // (xmin - 1, max id): the next settled row is the first one whose transaction is at or after the snapshot's xmin.
      await manager.query(
        `INSERT INTO outbox_cursors (consumer, instance_id, tx, id)
         SELECT $1, i.id, (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint - 1, 9223372036854775807
         FROM instances i WHERE i.id = ANY($2::text[])
         ON CONFLICT (consumer, instance_id) DO NOTHING`,
        [consumer, instanceIds],
      );
    });
  }

  /** The followed instances with events past their cursor (settled or not yet), oldest cursor first. */
  async behind(consumer: string, limit: number): Promise<string[]> {
    const rows: Array<{ instance_id: string }> = await this.dataSource.query(
      `SELECT c.instance_id FROM outbox_cursors c
       WHERE c.consumer = $1 AND EXISTS (
         SELECT 1 FROM outbox_events o WHERE o.instance_id = c.instance_id AND (o.tx, o.id) > (c.tx, c.id) AND o.id > c.floor)
       ORDER BY c.updated_at LIMIT $2`,
      [consumer, limit],
    );
    return rows.map((row) => row.instance_id);
  }

  /**
   * One step of `consumer` over `instanceId`: at most `limit` events, those of `eventTypes` (all when
   * absent) handed to `handle` in commit order inside the cursor's transaction. A handler that throws
   * rolls the step back (its rows and the cursor's move alike); the same events come again next time.
   */
  async step(consumer: string, instanceId: string, limit: number, handle: CursorHandler, eventTypes?: ReadonlySet<string>): Promise<CursorStep> {
    return this.dataSource.transaction(async (manager) => {
      const cursors: Array<{ tx: string; id: string; floor: string }> = await manager.query(
        `SELECT tx::text AS tx, id::text AS id, floor::text AS floor FROM outbox_cursors WHERE consumer = $1 AND instance_id = $2 FOR UPDATE SKIP LOCKED`,
        [consumer, instanceId],
      );
      if (cursors.length === 0) return { busy: true, read: 0, more: false };
      const position: OutboxPosition = cursors[0];
      const { rows, waiting } = await OutboxRepository.readSettledWithin(manager, instanceId, position, limit);
      if (rows.length === 0) return { busy: false, read: 0, more: waiting };
      const wanted = eventTypes ? rows.filter((row) => eventTypes.has(row.eventType)) : rows;
      if (wanted.length > 0)
        await handle(
          manager,
          instanceId,
          wanted.map(({ position: _position, ...row }) => row),
        );
      const last = rows[rows.length - 1].position;
      await manager.query(`UPDATE outbox_cursors SET tx = $3, id = $4, floor = $5, updated_at = now() WHERE consumer = $1 AND instance_id = $2`, [
        consumer,
        instanceId,
        last.tx,
        last.id,
        last.floor,
      ]);
      return { busy: false, read: rows.length, more: waiting || rows.length === limit };
    });
  }
}
