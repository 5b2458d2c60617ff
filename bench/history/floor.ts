/**
 * bench/history's storage floor (issue #38): how long Postgres itself takes to store the rows ours
 * stored, as directly as a client can — the same `messages` rows (every column, its stored copy
 * included) and the same `outbox_events` rows, into the same tables of the run's schema with their
 * indexes and the record-id trigger (ADR 0040), one transaction per `chunk` messages holding one
 * `INSERT … SELECT FROM jsonb_populate_recordset` for the messages and one for the chunk's share of the
 * events. The rows go under a scratch instance (deleted after); reading them back is not timed.
 * Passes with the trigger disabled show its share. The passes alternate, two of each, and each figure is
 * the faster of its two: a single pass with the trigger first ran on cold caches and put their warm-up on
 * the trigger (26-46 µs a row in the quick preset, where psql times the trigger at 6-8 µs a row).
 */
import { randomBytes } from 'node:crypto';
import type { DataSource, QueryRunner } from 'typeorm';
import { UNCOUNTED } from '../support/processes';

export interface StorageFloor {
  /** Seconds the inserts and commits took in all (with the trigger). */
  seconds: number;
  /** The same without the record-id trigger (ALTER TABLE … DISABLE TRIGGER in the run's own schema). */
  secondsWithoutTrigger: number;
  messages: number;
  events: number;
  transactions: number;
}

const round = (value: number) => Math.round(value * 100) / 100;

export async function storageFloor(dataSource: DataSource, instanceId: string, chunk: number, log: (line: string) => void): Promise<StorageFloor> {
  // The events ours wrote for the instance (its history events, its contacts…), spread evenly over the chunks.
  const events: Array<{ doc: string }> = await dataSource.query(
    `${UNCOUNTED} SELECT jsonb_build_object('event_type', event_type, 'chat_id', chat_id, 'payload', payload, 'traceparent', traceparent)::text AS doc
       FROM outbox_events WHERE instance_id = $1 ORDER BY id`,
    [instanceId],
  );
  const passes: Array<Awaited<ReturnType<typeof onePass>>> = [];
  for (const trigger of [true, false, true, false]) passes.push(await onePass(dataSource, instanceId, chunk, events, trigger));
  const fastest = (trigger: boolean) => passes.filter((_, index) => index % 2 === (trigger ? 0 : 1)).reduce((a, b) => (b.ms < a.ms ? b : a));
  const withTrigger = fastest(true);
  const withoutTrigger = fastest(false);
  log(
    `storage floor: ${withTrigger.messages} messages, ${events.length} events in ${withTrigger.transactions} transactions: ${round(withTrigger.ms / 1000)} s (without the trigger ${round(withoutTrigger.ms / 1000)} s)`,
  );
  return {
    seconds: round(withTrigger.ms / 1000),
    secondsWithoutTrigger: round(withoutTrigger.ms / 1000),
    messages: withTrigger.messages,
    events: events.length,
    transactions: withTrigger.transactions,
  };
}

async function onePass(
  dataSource: DataSource,
  instanceId: string,
  chunk: number,
  events: Array<{ doc: string }>,
  trigger: boolean,
): Promise<{ ms: number; messages: number; transactions: number }> {
  const scratch = `rfloor${randomBytes(4).toString('hex')}`;
  await dataSource.query(`${UNCOUNTED} INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $3, 'disconnected', false, '')`, [
    scratch,
    `tok-${scratch}`,
    `bench-floor-${scratch}`,
  ]);
  const runner: QueryRunner = dataSource.createQueryRunner();
  await runner.connect();
  let ms = 0;
  let messages = 0;
  let transactions = 0;
  try {
    if (!trigger) await runner.query(`${UNCOUNTED} ALTER TABLE messages DISABLE TRIGGER messages_fresh_taken_id`);
    // The read-back walks the unique (instance_id, message_id) index a slice at a time: with no statistics (a
    // fresh schema, autovacuum off in CI) the planner sorted the whole instance and built every row's JSON for
    // each slice (~0.9 s a slice, ~6 minutes of the bench's run for nothing it times).
    await runner.query(`${UNCOUNTED} ANALYZE messages`);
    const [{ n }]: Array<{ n: number }> = await runner.query(`${UNCOUNTED} SELECT count(*)::int AS n FROM messages WHERE instance_id = $1`, [instanceId]);
    const chunks = Math.max(1, Math.ceil(n / chunk));
    let after = '';
    let eventsDone = 0;
    for (;;) {
      // Read back (untimed): the next `chunk` rows as the client would send them, under the scratch instance.
      const slice: Array<{ doc: string; message_id: string }> = await runner.query(
        `${UNCOUNTED} SELECT (to_jsonb(m) || jsonb_build_object('instance_id', $2::text))::text AS doc, message_id
           FROM (SELECT * FROM messages WHERE instance_id = $1 AND message_id > $3 ORDER BY message_id LIMIT $4) m ORDER BY message_id`,
        [instanceId, scratch, after, chunk],
      );
      if (!slice.length) break;
      after = slice[slice.length - 1].message_id;
      const share = Math.round(((transactions + 1) * events.length) / chunks) - eventsDone;
      const messageDocument = `[${slice.map((row) => row.doc).join(',')}]`;
      const eventDocument = `[${events
        .slice(eventsDone, eventsDone + Math.max(0, share))
        .map((row) => row.doc)
        .join(',')}]`;
      const t0 = performance.now();
      await runner.query(`${UNCOUNTED} BEGIN`);
      await runner.query(`${UNCOUNTED} INSERT INTO messages SELECT * FROM jsonb_populate_recordset(NULL::messages, $1::jsonb)`, [messageDocument]);
      if (share > 0)
        await runner.query(
          `${UNCOUNTED} INSERT INTO outbox_events (instance_id, event_type, chat_id, payload, traceparent)
             SELECT $2, event_type, chat_id, payload, traceparent FROM jsonb_populate_recordset(NULL::outbox_events, $1::jsonb)`,
          [eventDocument, scratch],
        );
      await runner.query(`${UNCOUNTED} COMMIT`);
      ms += performance.now() - t0;
      eventsDone += Math.max(0, share);
      messages += slice.length;
      transactions++;
    }
    // Events past the last chunk's share (rounding): none, by construction; stored anyway so the count is the same.
    if (eventsDone < events.length) {
      const t0 = performance.now();
      await runner.query(
        `${UNCOUNTED} INSERT INTO outbox_events (instance_id, event_type, chat_id, payload, traceparent)
           SELECT $2, event_type, chat_id, payload, traceparent FROM jsonb_populate_recordset(NULL::outbox_events, $1::jsonb)`,
        [
          `[${events
            .slice(eventsDone)
            .map((row) => row.doc)
            .join(',')}]`,
          scratch,
        ],
      );
      ms += performance.now() - t0;
    }
  } finally {
    if (!trigger) await runner.query(`${UNCOUNTED} ALTER TABLE messages ENABLE TRIGGER messages_fresh_taken_id`).catch(() => undefined);
    await runner.query(`${UNCOUNTED} DELETE FROM outbox_events WHERE instance_id = $1`, [scratch]).catch(() => undefined);
    await runner.query(`${UNCOUNTED} DELETE FROM instances WHERE id = $1`, [scratch]).catch(() => undefined);
    await runner.release();
  }
  return { ms, messages, transactions };
}

/**
 * Wall time of this process's SQL statements by text until `stop()` (pg's Client.query, from the call to
 * its answer): where the worker waits on Postgres. `stop(top)` answers the `top` costliest.
 */
export async function timeStatements(): Promise<{ stop(top: number): Array<{ statement: string; calls: number; ms: number }> }> {
  const pg = await import('pg');
  const totals = new Map<string, { calls: number; ms: number }>();
  const keys = new Map<string, string>();
  const prototype = (pg.default?.Client ?? pg.Client).prototype as unknown as { query: (...call: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: unknown, ...call: unknown[]) {
    const first = call[0] as string | { text?: string };
    const raw = typeof first === 'string' ? first : (first?.text ?? '?');
    let key = keys.get(raw);
    if (key === undefined) {
      key = raw.replace(/\s+/g, ' ').slice(0, 100);
      if (keys.size < 10_000) keys.set(raw, key);
    }
    const t0 = performance.now();
    const result = original.apply(this, call) as unknown;
    const total = totals.get(key) ?? { calls: 0, ms: 0 };
    totals.set(key, total);
    total.calls++;
    if (result instanceof Promise)
      void result.then(
        () => (total.ms += performance.now() - t0),
        () => (total.ms += performance.now() - t0),
      );
    return result;
  };
  return {
    stop: (top) => {
      prototype.query = original;
      return [...totals.entries()]
        .map(([statement, { calls, ms }]) => ({ statement, calls, ms: Math.round(ms) }))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, top);
    },
  };
}
