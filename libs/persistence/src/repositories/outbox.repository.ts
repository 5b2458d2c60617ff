import { PREPARED } from '../preparing-client';
import { RepositoryBase } from './repository-base';

export interface NewOutboxEvent {
  eventType: string;
  chatId?: string;
  payload: Record<string, unknown>;
  /** The W3C `traceparent` of the span that wrote it (tracing on): stored beside the payload, never in it. */
  traceparent?: string;
}

export interface OutboxRow {
  id: string;
  instanceId: string;
  eventType: string;
  chatId: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

/** An outbox_events row as its readers select it (id as text; null from the LEFT JOIN when none was read). */
export interface RawOutboxRow {
  id: string | null;
  instance_id: string;
  event_type: string;
  chat_id: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

/** An outbox row read (its id present) as OutboxRow. */
export function toOutboxRow(row: RawOutboxRow): OutboxRow {
  return {
    id: row.id as string,
    instanceId: row.instance_id,
    eventType: row.event_type,
    chatId: row.chat_id,
    payload: row.payload,
    createdAt: row.created_at,
  };
}

/**
 * A cursor reader's place in the outbox: after the row `(tx, id)` in `(tx, id)` order, and never at or
 * below id `floor` (only set when resuming from an id the outbox no longer holds).
 */
export interface OutboxPosition {
  tx: string;
  id: string;
  floor: string;
}

/** One cursor read: settled rows in order, and whether committed rows wait behind a running transaction. */
export interface SettledRead {
  rows: Array<OutboxRow & { position: OutboxPosition }>;
  waiting: boolean;
}

const MAX_BIGINT = '9223372036854775807';

/** A statement's text and parameters. */
interface TailStatementText {
  text: string;
  values: unknown[];
}

/**
 * Events as one JSON array, the insert's one parameter (`jsonb_array_elements`): `i` instance, `t` type, `c` chat,
 * `p` payload, `tr` traceparent. Not a `text[]` of payloads: pg writes an array parameter as an array literal,
 * escaping every quote of every payload in JavaScript, and Postgres unescapes it again before parsing the JSON. A
 * history chunk's event (1,000 messages, ~230 KB) cost 9–13 ms of the worker's CPU to insert that way, 3–4 ms as
 * one JSON value (issue #38, bench/history).
 */
function eventsJson(entries: ReadonlyArray<{ instanceId?: string; event: NewOutboxEvent }>): string {
  return JSON.stringify(
    entries.map(({ instanceId, event }) => ({
      i: instanceId,
      t: event.eventType,
      c: event.chatId ?? '',
      p: event.payload,
      tr: event.traceparent ?? undefined,
    })),
  );
}

/** The event outbox: rows are written with the change that caused them; cursor readers read them in commit-safe order. */
export class OutboxRepository extends RepositoryBase {
  /** Inserts events inside the caller's transaction; returns the id of the last one (null if none). */
  async insert(instanceId: string, events: NewOutboxEvent[]): Promise<string | null> {
    const manager = this.db;
    const statement = OutboxRepository.insertStatement(instanceId, events);
    return statement ? statement.lastId(await manager.query(statement.text, statement.values)) : null;
  }

  /**
   * insert() as a statement to run (a fenced transaction's tail, written with its COMMIT: LeaseRepository);
   * `lastId` reads the id of the last event from its rows. Null when there are no events.
   */
  static insertStatement(instanceId: string, events: NewOutboxEvent[]): (TailStatementText & { lastId(rows: unknown[]): string | null }) | null {
    if (events.length === 0) return null;
    return {
      text: `${PREPARED} INSERT INTO outbox_events (instance_id, event_type, chat_id, payload, traceparent)
       SELECT $1, x->>'t', x->>'c', x->'p', x->>'tr' FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS u(x, n)
       ORDER BY n
       RETURNING id`,
      values: [instanceId, eventsJson(events.map((event) => ({ event })))],
      lastId: (rows) => (rows.length ? String((rows[rows.length - 1] as { id: string }).id) : null),
    };
  }

  /**
   * insert() for the events of many instances in one statement (a group transaction of inbound
   * writes); each instance's events keep their order. Returns the id of each instance's last event.
   */
  async insertMany(batches: ReadonlyArray<{ instanceId: string; events: NewOutboxEvent[] }>): Promise<Map<string, string>> {
    const manager = this.db;
    const statement = OutboxRepository.insertManyStatement(batches);
    return statement ? statement.lastIds(await manager.query(statement.text, statement.values)) : new Map();
  }

  /** insertMany() as a statement to run (as insertStatement()); `lastIds` reads each instance's last event id from its rows. */
  static insertManyStatement(
    batches: ReadonlyArray<{ instanceId: string; events: NewOutboxEvent[] }>,
  ): (TailStatementText & { lastIds(rows: unknown[]): Map<string, string> }) | null {
    const all = batches.flatMap(({ instanceId, events }) => events.map((event) => ({ instanceId, event })));
    if (all.length === 0) return null;
    return {
      text: `${PREPARED} INSERT INTO outbox_events (instance_id, event_type, chat_id, payload, traceparent)
       SELECT x->>'i', x->>'t', x->>'c', x->'p', x->>'tr' FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS u(x, n)
       ORDER BY n
       RETURNING id, instance_id`,
      values: [eventsJson(all)],
      lastIds: (rows) => {
        const last = new Map<string, string>();
        for (const row of rows as Array<{ id: string; instance_id: string }>) {
          const id = String(row.id);
          const before = last.get(row.instance_id);
          if (before === undefined || BigInt(id) > BigInt(before)) last.set(row.instance_id, id);
        }
        return last;
      },
    };
  }

  /**
   * Where a cursor reader starts when it has no position: just after everything this moment's snapshot
   * sees. `skip` lists the ids that are already visible but not yet settled (written by a transaction
   * at or above the snapshot's xmin); readSettled will pass them, and they must not be shown.
   */
  async currentPosition(instanceId: string): Promise<{ position: OutboxPosition; skip: Set<string> }> {
    const rows: Array<{ xmin: string; seen: string[] }> = await this.db.query(
      `WITH s AS (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS xmin)
       SELECT s.xmin::text AS xmin, array(SELECT o.id::text FROM outbox_events o WHERE o.instance_id = $1 AND o.tx >= s.xmin) AS seen FROM s`,
      [instanceId],
    );
    const xmin = BigInt(rows[0].xmin);
    // (xmin - 1, max id): the next settled row is the first one with tx >= xmin.
    return { position: { tx: String(xmin - 1n), id: MAX_BIGINT, floor: '0' }, skip: new Set(rows[0].seen) };
  }

  /**
   * The position of event `eventId` of this instance (an SSE `Last-Event-ID`). An id that is not (or no
   * longer) in the outbox cannot be placed in commit order; the reader then gets every event with a
   * larger id, as before this position existed.
   */
  async positionOf(instanceId: string, eventId: string): Promise<OutboxPosition> {
    const rows: Array<{ tx: string }> = await this.db.query(`SELECT tx::text AS tx FROM outbox_events WHERE instance_id = $1 AND id = $2`, [
      instanceId,
      eventId,
    ]);
    return rows.length ? { tx: rows[0].tx, id: eventId, floor: '0' } : { tx: '0', id: '0', floor: eventId };
  }

  /**
   * The instance's events after `position` in commit-safe order, oldest first: only rows whose writing
   * transaction ended before this read's snapshot began (`tx` below the snapshot's xmin), ordered by
   * `(tx, id)`. Such a transaction can add no more rows, and every later one has a larger `tx`, so a row
   * that commits late can never fall behind a cursor that advanced past a neighbour (migration
   * 1763900000000 explains the choice). A long transaction elsewhere delays reads until it ends.
   * `waiting` says that committed rows past the position exist but are not settled yet: read again soon.
   * Bound `within` a consumer's transaction (it holds the cursor), on that transaction's connection.
   * `waiting` is asked once per read (`w`): asked on each row returned, a read from an id the outbox no
   * longer holds (an SSE resume) scanned the instance's events once per row (100 × 19,880 rows, 184 ms).
   */
  async readSettled(instanceId: string, position: OutboxPosition, limit: number): Promise<SettledRead> {
    const rows: Array<RawOutboxRow & { tx: string; waiting: boolean }> = await this.db.query(
      `WITH s AS (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint AS xmin),
       r AS (
         SELECT o.id, o.tx, o.instance_id, o.event_type, o.chat_id, o.payload, o.created_at FROM outbox_events o, s
         WHERE o.instance_id = $1 AND (o.tx, o.id) > ($2::bigint, $3::bigint) AND o.id > $4::bigint AND o.tx < s.xmin
         ORDER BY o.tx, o.id LIMIT $5),
       w AS MATERIALIZED (
         SELECT EXISTS (SELECT 1 FROM outbox_events w WHERE w.instance_id = $1 AND w.tx >= s.xmin AND (w.tx, w.id) > ($2::bigint, $3::bigint) AND w.id > $4::bigint) AS waiting
         FROM s)
       SELECT r.id::text AS id, r.tx::text AS tx, r.instance_id, r.event_type, r.chat_id, r.payload, r.created_at, w.waiting
       FROM w LEFT JOIN r ON true
       ORDER BY r.tx, r.id`,
      [instanceId, position.tx, position.id, position.floor, limit],
    );
    return {
      waiting: rows[0]?.waiting ?? false,
      rows: rows
        .filter((row) => row.id !== null)
        .map((row) => ({ ...toOutboxRow(row), position: { tx: row.tx, id: row.id as string, floor: position.floor } })),
    };
  }
}
