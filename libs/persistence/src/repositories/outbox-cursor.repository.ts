import type { EntityManager } from 'typeorm';
import { toOutboxRow, type OutboxRow, type RawOutboxRow } from './outbox.repository';
import { transactionPipelined } from '../pipelined-transaction';
import { PREPARED } from '../preparing-client';
import { type Tx } from '../tx';
import { RepositoryBase } from './repository-base';

/** What one step of a consumer over one instance did. */
export interface CursorStep<T = void> {
  /** Another process holds this (consumer, instance) cursor right now; nothing was read. */
  busy: boolean;
  /** There is no such cursor (the instance is no longer followed, or was deleted); nothing was read. */
  gone?: boolean;
  /** Events the cursor moved past (handed to the handler or filtered out). */
  read: number;
  /** More events may be ready at once (a full batch was read). */
  more: boolean;
  /** What the handler returned (undefined when no event of its types was read). */
  handled?: T;
}

/**
 * A consumer's work for the events of one step, inside the step's transaction: what it writes through
 * a repository bound to it (`repository.within(tx)`) commits together with the cursor.
 */
export type CursorHandler<T = void> = (tx: Tx, instanceId: string, events: OutboxRow[]) => Promise<T>;

/**
 * What a step of the cursor `c` (a CTE of `tx, id, floor, pending`) over instance $2 reads, `columns` of
 * `outbox_events o` and `part`: 0 for the rows of its pending transactions (those visible have ended:
 * a running transaction's rows are not), 1 for at most $3 committed rows after its position, in order.
 *
 * Both read the `(instance_id, tx, id)` index from the cursor on: the cursor's values come as scalar
 * subqueries (one value each, known before the events are read), so the index answers the conditions
 * on them, and the pending transactions are looked up one by one; joined with `c` instead, or with
 * `tx = ANY(pending)`, the planner read every event of the instance and filtered them. The
 * floor (0 but for a cursor resumed from an id the outbox no longer holds) is a filter, never an access
 * path: written `o.id > floor`, the planner read the primary key from the floor on where one instance's
 * events are most of the outbox (a deployment of one number, the benchmarks). No cursor (locked by
 * another step, or gone): every subquery is null and nothing is read.
 */
function unreadSql(columns: string): string {
  return `(SELECT 0 AS part, ${columns} FROM unnest((SELECT pending FROM c)) AS p(tx)
          JOIN outbox_events o ON o.instance_id = $2 AND o.tx = p.tx WHERE ${ABOVE_FLOOR})
         UNION ALL
         (SELECT 1 AS part, ${columns} FROM outbox_events o
          WHERE o.instance_id = $2 AND (o.tx, o.id) > ((SELECT tx FROM c), (SELECT id FROM c)) AND ${ABOVE_FLOOR}
          ORDER BY o.tx, o.id LIMIT $3)`;
}

/** The event is above the cursor's floor, in a form no index answers (unreadSql). */
const ABOVE_FLOOR = `((SELECT floor FROM c) = 0 OR o.id > (SELECT floor FROM c))`;

/**
 * Durable outbox consumers: one cursor per (consumer, instance) in `outbox_cursors` (migrations
 * 1764090000000, 1764400000000). A step locks the cursor row with `SKIP LOCKED`, reads the committed
 * events after it and moves the cursor past them (one statement), then lets the handler write its work
 * rows in the same transaction: the events become work exactly once, and a crash or a handler's error
 * before the commit leaves the cursor where it was.
 *
 * The cursor is a position in `(tx, id)` order plus `pending`, the transactions still running below that
 * position when it was moved there (ADR 0020). A step reads every committed row after the position (a
 * transaction that started first but is still running holds nothing back) and the rows of the pending
 * transactions that have ended since; a transaction that ends gets no id below the position later
 * (ids are handed out in order), so nothing is skipped and nothing is read twice. The rows of one
 * transaction are handed over together; those of a pending one all at once when it ends, after the
 * limit's batch would otherwise have ended (a very large transaction that overlapped a step makes one
 * large batch).
 */
export class OutboxCursorRepository extends RepositoryBase {
  /**
   * The `tx, id, pending` of a new cursor, as SQL: now. The position is the snapshot's xmax - 1 (the
   * newest transaction that has ended) past its last row, and the transactions still running are
   * pending: events committed before are not replayed, those of transactions still running are read
   * when they end, and later ones come after the position.
   */
  static readonly START = `(pg_snapshot_xmax(pg_current_snapshot())::text)::bigint - 1, 9223372036854775807,
    ARRAY(SELECT (x::text)::bigint FROM pg_snapshot_xip(pg_current_snapshot()) x ORDER BY 1)`;

  /** peek()'s statement: $1 consumer, $2 instance, $3 limit, $4 event types, $5 ignored JSON paths. */
  static readonly PEEK = `${PREPARED} WITH c AS (SELECT tx, id, floor, pending FROM outbox_cursors WHERE consumer = $1 AND instance_id = $2),
       r AS (${unreadSql('o.event_type, o.payload')})
       SELECT EXISTS (SELECT 1 FROM r WHERE r.event_type = ANY($4::text[]) AND NOT (r.payload @? ANY($5::jsonpath[]))) AS wanted,
         (SELECT count(*)::int FROM r) AS n`;

  /** A step's statement (lockReadAndMove): $1 consumer, $2 instance, $3 limit, $4 ignored JSON paths, $5 event types or null. */
  static readonly STEP = `${PREPARED} WITH c AS (SELECT tx, id, floor, pending FROM outbox_cursors WHERE consumer = $1 AND instance_id = $2 FOR UPDATE SKIP LOCKED),
       s AS (SELECT pg_current_snapshot() AS snap),
       done AS (SELECT p AS ended FROM c, s, unnest(c.pending) p WHERE pg_visible_in_snapshot(p::text::xid8, s.snap)),
       r AS (${unreadSql('o.id, o.tx, o.instance_id, o.event_type, o.chat_id, o.payload, o.created_at')}),
       last AS (SELECT tx, id FROM r WHERE part = 1 ORDER BY tx DESC, id DESC LIMIT 1),
       np AS (
         SELECT coalesce(array_agg(x ORDER BY x), '{}') AS pending FROM (
           SELECT p AS x FROM c, unnest(c.pending) p WHERE p NOT IN (SELECT ended FROM done)
           UNION
           SELECT (x::text)::bigint FROM c, s, last, pg_snapshot_xip(s.snap) x WHERE (x::text)::bigint > c.tx AND (x::text)::bigint < last.tx) q),
       moved AS (
         UPDATE outbox_cursors u SET tx = coalesce(last.tx, c.tx), id = coalesce(last.id, c.id), pending = np.pending, updated_at = now()
         FROM c CROSS JOIN np LEFT JOIN last ON true
         WHERE u.consumer = $1 AND u.instance_id = $2 AND (last.tx IS NOT NULL OR np.pending <> c.pending) RETURNING 1)
       SELECT c.tx::text AS cursor_tx, c.tx IS NOT NULL OR EXISTS (SELECT 1 FROM outbox_cursors WHERE consumer = $1 AND instance_id = $2) AS present, r.part, r.id::text AS id, r.instance_id, r.event_type, r.chat_id,
         CASE WHEN k.wanted THEN r.payload END AS payload, r.created_at, k.wanted
       FROM s LEFT JOIN c ON true LEFT JOIN r ON true
         LEFT JOIN LATERAL (SELECT ($5::text[] IS NULL OR r.event_type = ANY($5::text[])) AND NOT (r.payload @? ANY($4::jsonpath[])) AS wanted) k ON true
       ORDER BY r.part, r.tx, r.id`;

  /**
   * Follows exactly the instances `instances` names for `consumer`: a new one starts at the current end of
   * its outbox (START: events committed before are not replayed, those of transactions still running are
   * read), and the cursors of instances no longer followed are dropped, so following again later starts
   * afresh. Returns the followed ids.
   *
   * Given as a function, the set is read after the cursors are, and only the cursor versions read before
   * it may be dropped: a cursor written meanwhile (a feature turned on with its cursor in one transaction,
   * start) is kept even when the set was read before that transaction committed, where dropping it
   * would lose the events between its start and the next follow.
   */
  async follow(consumer: string, instances: string[] | (() => Promise<string[]>)): Promise<string[]> {
    let drop: { ids: string[]; versions: string[] } | null = null;
    let instanceIds: string[];
    if (typeof instances === 'function') {
      const before: Array<{ instance_id: string; version: string }> = await this.db.query(
        `SELECT instance_id, xmin::text AS version FROM outbox_cursors WHERE consumer = $1`,
        [consumer],
      );
      instanceIds = [...new Set(await instances())];
      const followed = new Set(instanceIds);
      const gone = before.filter((row) => !followed.has(row.instance_id));
      drop = { ids: gone.map((row) => row.instance_id), versions: gone.map((row) => row.version) };
    } else {
      instanceIds = instances;
    }
    await this.transaction(async (manager) => {
      if (drop === null) {
        await manager.query(`DELETE FROM outbox_cursors WHERE consumer = $1 AND NOT (instance_id = ANY($2::text[]))`, [consumer, instanceIds]);
      } else if (drop.ids.length > 0) {
        await manager.query(`DELETE FROM outbox_cursors WHERE consumer = $1 AND (instance_id, xmin::text) IN (SELECT * FROM unnest($2::text[], $3::text[]))`, [
          consumer,
          drop.ids,
          drop.versions,
        ]);
      }
      if (instanceIds.length === 0) return;
      await manager.query(
        `INSERT INTO outbox_cursors (consumer, instance_id, tx, id, pending)
         SELECT $1, i.id, ${OutboxCursorRepository.START}
         FROM instances i WHERE i.id = ANY($2::text[])
         ON CONFLICT (consumer, instance_id) DO NOTHING`,
        [consumer, instanceIds],
      );
    });
    return instanceIds;
  }

  /**
   * Starts `consumer`'s cursor of `instanceId` now (START), in the caller's transaction (the one that
   * turns the feature on): the events committed after it are followed, however soon, and none from
   * before. `restart`: a cursor left from an earlier time the feature was on starts afresh too (else it
   * is kept where it is).
   */
  async start(consumer: string, instanceId: string, restart: boolean): Promise<void> {
    const manager = this.db;
    await manager.query(
      `INSERT INTO outbox_cursors (consumer, instance_id, tx, id, pending)
       SELECT $1, $2, ${OutboxCursorRepository.START}
       ON CONFLICT (consumer, instance_id) DO ${
         restart ? 'UPDATE SET tx = EXCLUDED.tx, id = EXCLUDED.id, pending = EXCLUDED.pending, floor = 0, updated_at = now()' : 'NOTHING'
       }`,
      [consumer, instanceId],
    );
  }

  /**
   * The followed instances with committed events past their cursor or of their pending transactions, oldest cursor first.
   *
   * The first event past a cursor is read in the order of `outbox_events_instance_tx` (`ORDER BY … LIMIT 1`),
   * so Postgres starts at the cursor in that index. Asked as `EXISTS (… (o.tx, o.id) > (c.tx, c.id))`, it
   * planned a sequential scan of the whole outbox for each cursor, every instance's events, on every
   * follower poll (each second, for the chatbot's and the Chatwoot bridge's): a caught-up cursor, the usual
   * case, read all of it (5.7 ms, 59,433 rows on a seeded schema; 0.4 ms by the index).
   */
  async behind(consumer: string, limit: number): Promise<string[]> {
    const rows: Array<{ instance_id: string }> = await this.db.query(
      `SELECT c.instance_id FROM outbox_cursors c
       WHERE c.consumer = $1 AND (
         (SELECT o.id FROM outbox_events o WHERE o.instance_id = c.instance_id AND (o.tx, o.id) > (c.tx, c.id) AND (c.floor = 0 OR o.id > c.floor)
          ORDER BY o.tx, o.id LIMIT 1) IS NOT NULL
         OR EXISTS (SELECT 1 FROM outbox_events o WHERE o.instance_id = c.instance_id AND o.tx = ANY(c.pending) AND (c.floor = 0 OR o.id > c.floor)))
       ORDER BY c.updated_at LIMIT $2`,
      [consumer, limit],
    );
    return rows.map((row) => row.instance_id);
  }

  /**
   * Whether a step of `consumer` over `instanceId` would hand the handler anything, without locking or
   * writing (no transaction id, no commit to flush): `wanted` when an event of `eventTypes` that matches
   * none of the `ignore` JSON paths (over the payload) is committed past the cursor or in one of its
   * pending transactions; `full` when at least `limit` events are. The cursor is read as committed,
   * without its lock: a step running elsewhere meanwhile makes the answer conservative at worst (a step
   * follows that finds less or nothing).
   */
  async peek(
    consumer: string,
    instanceId: string,
    limit: number,
    eventTypes: ReadonlySet<string>,
    ignore: readonly string[],
  ): Promise<{ wanted: boolean; full: boolean }> {
    const [row]: Array<{ wanted: boolean; n: number }> = await this.db.query(OutboxCursorRepository.PEEK, [
      consumer,
      instanceId,
      limit,
      [...eventTypes],
      ignore,
    ]);
    return { wanted: row?.wanted === true, full: (row?.n ?? 0) >= limit };
  }

  /**
   * One step of `consumer` over `instanceId`: at most `limit` events after the position (and all those of
   * the pending transactions that ended), those of `eventTypes` (all when absent) that match none of the
   * `ignore` JSON paths handed to `handle` inside the cursor's transaction, the pending ones first, then
   * in `(tx, id)` order (the others' payloads are not even read). A handler that throws rolls the step
   * back (its rows and the cursor's move alike); the same events come again next time.
   */
  async step<T = void>(
    consumer: string,
    instanceId: string,
    limit: number,
    handle: CursorHandler<T>,
    eventTypes?: ReadonlySet<string>,
    ignore: readonly string[] = [],
  ): Promise<CursorStep<T>> {
    // Its START TRANSACTION goes out with the cursor's statement (one round trip fewer: ADR 0023).
    return transactionPipelined(this.dataSource, async (manager) => {
      const { busy, gone, rows, forward } = await OutboxCursorRepository.lockReadAndMove(manager, consumer, instanceId, limit, eventTypes, ignore);
      if (gone) return { busy: false, gone: true, read: 0, more: false };
      if (busy) return { busy: true, read: 0, more: false };
      if (rows.length === 0) return { busy: false, read: 0, more: false };
      const wanted = rows.filter((row) => row.wanted).map(({ wanted: _wanted, ...row }) => row);
      const handled = wanted.length > 0 ? await handle(manager, instanceId, wanted) : undefined;
      return { busy: false, read: rows.length, more: forward === limit, handled };
    });
  }

  /**
   * Locks the (consumer, instance) cursor (SKIP LOCKED: `busy` when another process holds it), reads the
   * events to hand over and moves the cursor, in one statement (the move commits or rolls back with the
   * step's transaction). Read (unreadSql): the rows of the pending transactions, which this statement
   * sees only once they ended, then at most `limit` committed rows after the position (`forward`). New position: the
   * last forward row; new `pending`: the old one without the ended transactions (`done`), plus the transactions
   * this snapshot sees running between the old and the new position (every one running below the new
   * position is in the snapshot's xip: it is below the snapshot's xmax, since a row after it is visible).
   * `wanted` marks the events for the handler (of `eventTypes`, matching no `ignore` path); the others
   * come without their payload. Under READ COMMITTED the lock sees the cursor's latest committed state.
   */
  private static async lockReadAndMove(
    manager: EntityManager,
    consumer: string,
    instanceId: string,
    limit: number,
    eventTypes: ReadonlySet<string> | undefined,
    ignore: readonly string[],
  ): Promise<{ busy: boolean; gone: boolean; rows: Array<OutboxRow & { wanted: boolean }>; forward: number }> {
    const found: Array<RawOutboxRow & { cursor_tx: string | null; present: boolean; wanted: boolean | null; part: number | null }> = await manager.query(
      OutboxCursorRepository.STEP,
      [consumer, instanceId, limit, ignore, eventTypes ? [...eventTypes] : null],
    );
    if (!found.length || found[0].cursor_tx === null) return { busy: found[0]?.present === true, gone: found[0]?.present !== true, rows: [], forward: 0 };
    const rows = found.filter((row) => row.id !== null);
    return {
      busy: false,
      gone: false,
      forward: rows.filter((row) => row.part === 1).length,
      rows: rows.map((row) => ({ ...toOutboxRow(row), wanted: row.wanted === true })),
    };
  }
}
