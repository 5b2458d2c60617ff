import type { DataSource, EntityManager } from 'typeorm';
import { toOutboxRow, type OutboxRow, type RawOutboxRow } from './outbox.repository';

/** What one step of a consumer over one instance did. */
export interface CursorStep<T = void> {
  /** Another process holds this (consumer, instance) cursor right now; nothing was read. */
  busy: boolean;
  /** Events the cursor moved past (handed to the handler or filtered out). */
  read: number;
  /** More events may be ready at once (a full batch, or committed rows waiting behind a running transaction). */
  more: boolean;
  /** What the handler returned (undefined when no event of its types was read). */
  handled?: T;
}

export type CursorHandler<T = void> = (manager: EntityManager, instanceId: string, events: OutboxRow[]) => Promise<T>;

/**
 * Durable outbox consumers: one cursor per (consumer, instance) in `outbox_cursors` (migration
 * 1764090000000). A step locks the cursor row with `SKIP LOCKED`, reads the settled events after it and
 * moves the cursor past them (one statement), then lets the handler write its work rows in the same
 * transaction: the events become work exactly once, and a crash or a handler's error before the commit
 * leaves the cursor where it was.
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
   * Whether a step of `consumer` over `instanceId` would hand the handler anything, without locking or
   * writing (no transaction id, no commit to flush): `wanted` when an event of `eventTypes` that matches
   * none of the `ignore` JSON paths (over the payload) is settled past the cursor; `full` when at least
   * `limit` events are; `waiting` as in step(). The cursor is read as committed, without its lock: a
   * step running elsewhere meanwhile makes the answer conservative at worst (a step follows that finds
   * less or nothing).
   */
  async peek(
    consumer: string,
    instanceId: string,
    limit: number,
    eventTypes: ReadonlySet<string>,
    ignore: readonly string[],
  ): Promise<{ wanted: boolean; full: boolean; waiting: boolean }> {
    const [row]: Array<{ wanted: boolean; n: number; waiting: boolean }> = await this.dataSource.query(
      `WITH c AS (SELECT tx, id, floor FROM outbox_cursors WHERE consumer = $1 AND instance_id = $2),
       s AS (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS xmin),
       r AS (
         SELECT o.event_type, o.payload FROM outbox_events o, s, c
         WHERE o.instance_id = $2 AND (o.tx, o.id) > (c.tx, c.id) AND o.id > c.floor AND o.tx < s.xmin
         ORDER BY o.tx, o.id LIMIT $3)
       SELECT EXISTS (SELECT 1 FROM r WHERE r.event_type = ANY($4::text[]) AND NOT (r.payload @? ANY($5::jsonpath[]))) AS wanted,
         (SELECT count(*)::int FROM r) AS n,
         EXISTS (SELECT 1 FROM outbox_events w, s, c WHERE w.instance_id = $2 AND w.tx >= s.xmin AND (w.tx, w.id) > (c.tx, c.id) AND w.id > c.floor) AS waiting`,
      [consumer, instanceId, limit, [...eventTypes], ignore],
    );
    return { wanted: row?.wanted === true, full: (row?.n ?? 0) >= limit, waiting: row?.waiting === true };
  }

  /**
   * One step of `consumer` over `instanceId`: at most `limit` events, those of `eventTypes` (all when
   * absent) that match none of the `ignore` JSON paths handed to `handle` in commit order inside the
   * cursor's transaction (the others' payloads are not even read). A handler that throws
   * rolls the step back (its rows and the cursor's move alike); the same events come again next time.
   */
  async step<T = void>(
    consumer: string,
    instanceId: string,
    limit: number,
    handle: CursorHandler<T>,
    eventTypes?: ReadonlySet<string>,
    ignore: readonly string[] = [],
  ): Promise<CursorStep<T>> {
    return this.dataSource.transaction(async (manager) => {
      const { busy, rows, waiting } = await OutboxCursorRepository.lockReadAndMove(manager, consumer, instanceId, limit, eventTypes, ignore);
      if (busy) return { busy: true, read: 0, more: false };
      if (rows.length === 0) return { busy: false, read: 0, more: waiting };
      const wanted = rows.filter((row) => row.wanted).map(({ wanted: _wanted, ...row }) => row);
      const handled = wanted.length > 0 ? await handle(manager, instanceId, wanted) : undefined;
      return { busy: false, read: rows.length, more: waiting || rows.length === limit, handled };
    });
  }

  /**
   * Locks the (consumer, instance) cursor (SKIP LOCKED: `busy` when another process holds it), reads the
   * settled events after it and moves the cursor past the last of them, in one statement (the move
   * commits or rolls back with the step's transaction): OutboxRepository.readSettledWithin's read (rows
   * of transactions older than the snapshot's xmin, in (tx, id) order; `waiting`: committed rows behind a
   * running transaction) from the locked cursor; `wanted` marks the events for the handler (of
   * `eventTypes`, matching no `ignore` path), the others come without their payload. Under READ COMMITTED the lock sees the cursor's latest
   * committed position, and every event settled by this statement's snapshot is visible to it.
   */
  private static async lockReadAndMove(
    manager: EntityManager,
    consumer: string,
    instanceId: string,
    limit: number,
    eventTypes: ReadonlySet<string> | undefined,
    ignore: readonly string[],
  ): Promise<{ busy: boolean; rows: Array<OutboxRow & { wanted: boolean }>; waiting: boolean }> {
    const found: Array<
      RawOutboxRow & {
        cursor_tx: string | null;
        wanted: boolean | null;
        waiting: boolean | null;
      }
    > = await manager.query(
      `WITH c AS (SELECT tx, id, floor FROM outbox_cursors WHERE consumer = $1 AND instance_id = $2 FOR UPDATE SKIP LOCKED),
       s AS (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS xmin),
       r AS (
         SELECT o.id, o.tx, o.instance_id, o.event_type, o.chat_id, o.payload, o.created_at FROM outbox_events o, s, c
         WHERE o.instance_id = $2 AND (o.tx, o.id) > (c.tx, c.id) AND o.id > c.floor AND o.tx < s.xmin
         ORDER BY o.tx, o.id LIMIT $3),
       last AS (SELECT tx, id FROM r ORDER BY tx DESC, id DESC LIMIT 1),
       moved AS (
         UPDATE outbox_cursors u SET tx = last.tx, id = last.id, updated_at = now() FROM last, c
         WHERE u.consumer = $1 AND u.instance_id = $2 RETURNING 1)
       SELECT c.tx::text AS cursor_tx, r.id::text AS id, r.instance_id, r.event_type, r.chat_id,
         CASE WHEN k.wanted THEN r.payload END AS payload, r.created_at, k.wanted,
         EXISTS (SELECT 1 FROM outbox_events w WHERE w.instance_id = $2 AND w.tx >= s.xmin AND (w.tx, w.id) > (c.tx, c.id) AND w.id > c.floor) AS waiting
       FROM s LEFT JOIN c ON true LEFT JOIN r ON true
         LEFT JOIN LATERAL (SELECT ($5::text[] IS NULL OR r.event_type = ANY($5::text[])) AND NOT (r.payload @? ANY($4::jsonpath[])) AS wanted) k ON true
       ORDER BY r.tx, r.id`,
      [consumer, instanceId, limit, ignore, eventTypes ? [...eventTypes] : null],
    );
    if (!found.length || found[0].cursor_tx === null) return { busy: true, rows: [], waiting: false };
    return {
      busy: false,
      waiting: found[0].waiting === true,
      rows: found.filter((row) => row.id !== null).map((row) => ({ ...toOutboxRow(row), wanted: row.wanted === true })),
    };
  }
}
