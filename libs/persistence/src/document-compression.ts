import type { QueryRunner } from 'typeorm';

/**
 * The documents written on the hot paths compress with lz4 instead of pglz (ADR 0071).
 *
 * A value over ~2 KB (a row over TOAST_TUPLE_THRESHOLD) is compressed before it is stored, with the column's method,
 * pglz by default. Every `messages` event is such a value (~2.5 KB of JSON with its chat), and pglz is slow: it cost
 * ~25–35 µs of Postgres' CPU per event against lz4's few (docs/bench/webhooks.md, session 62), for rows as small.
 *
 * Not a migration: it changes how values written from now on are stored, nothing any process reads or writes
 * (values compressed either way read the same), so no release depends on it and a start never waits for it. Each
 * `ALTER` takes its table's exclusive lock, and every statement on the table queues behind one waiting for it: each
 * waits at most LOCK_WAIT, on its own (no transaction around them). A lock that does not come (a long transaction or
 * a `pg_dump` holding the table) leaves that column and the rest to the next start. Once every column is set, a
 * start reads pg_attribute once and changes nothing. A server built without lz4 keeps pglz.
 */
export const LZ4_COLUMNS: ReadonlyArray<readonly [table: string, column: string]> = [
  ['outbox_events', 'payload'],
  ['messages', 'raw'],
  ['messages', 'content'],
  ['messages', 'send_payload'],
  ['auth_keys', 'value'],
  ['send_queue', 'request'],
  ['campaign_queue', 'request'],
  ['chatwoot_jobs', 'payload'],
  ['chatbot_rounds', 'envelope'],
  ['chatbot_rounds', 'inputs'],
  ['chatbot_rounds', 'plan'],
];

/** How long one `ALTER` waits for its table's lock (the table's statements wait behind it meanwhile). */
const LOCK_WAIT = '200ms';

export interface DocumentCompression {
  /** Columns set to lz4 by this call. */
  set: string[];
  /** Columns still to set (a table's lock did not come in time, or an `ALTER` was refused). */
  left: string[];
  /** Whether this server was built with lz4. */
  lz4: boolean;
  /** Why an `ALTER` was refused, other than its lock not coming in time. */
  error?: string;
}

/**
 * Sets lz4 on the LZ4_COLUMNS of the connection's schema that do not have it, stopping at the first lock that does not
 * come in time or the first refusal; never throws for an `ALTER` (a start does not depend on it). Runs outside any
 * transaction; leaves the connection's lock_timeout as it found it (the default).
 */
export async function compressDocumentsWithLz4(runner: QueryRunner): Promise<DocumentCompression> {
  // First: a server before PostgreSQL 14 has neither lz4 nor pg_attribute.attcompression.
  if (!(await lz4Available(runner))) return { set: [], left: [], lz4: false };
  const pending = await columnsWithoutLz4(runner);
  if (pending.length === 0) return { set: [], left: [], lz4: true };
  const names = pending.map(([table, column]) => `${table}.${column}`);
  const set: string[] = [];
  let failure: string | undefined;
  await runner.query(`SET lock_timeout = '${LOCK_WAIT}'`);
  try {
    for (const [table, column] of pending) {
      try {
        await runner.query(`ALTER TABLE ${table} ALTER COLUMN ${column} SET COMPRESSION lz4`);
      } catch (error) {
        // 55P03 lock_not_available: the table is held; this and the rest wait for the next start. Any other
        // refusal (a role that does not own the table, say) does not stop the start either: pglz stays.
        if ((error as { code?: string }).code !== '55P03') failure = (error as Error).message;
        break;
      }
      set.push(`${table}.${column}`);
    }
  } finally {
    // The connection goes back to the pool; a RESET that fails (the connection is gone) hides no error of the ALTER's.
    await runner.query(`RESET lock_timeout`).catch(() => undefined);
  }
  return { set, left: names.slice(set.length), lz4: true, ...(failure ? { error: failure } : {}) };
}

/** Whether this server was built with lz4 (PostgreSQL 14 or later, `--with-lz4`). */
export async function lz4Available(runner: { query(sql: string): Promise<unknown> }): Promise<boolean> {
  const rows = (await runner.query(`SELECT 'lz4' = ANY (enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'`)) as Array<{
    lz4: boolean;
  }>;
  return rows[0]?.lz4 === true;
}

/**
 * The LZ4_COLUMNS whose compression is not lz4 (in LZ4_COLUMNS' order), their tables found through the search_path
 * as the unqualified `ALTER` finds them.
 */
async function columnsWithoutLz4(runner: QueryRunner): Promise<Array<readonly [string, string]>> {
  const rows: Array<{ table: string; column: string; method: string }> = await runner.query(
    `SELECT u.t AS "table", u.col AS "column", a.attcompression AS method
       FROM unnest($1::text[], $2::text[]) AS u(t, col)
       JOIN pg_attribute a ON a.attrelid = to_regclass(quote_ident(u.t)) AND a.attname = u.col AND NOT a.attisdropped`,
    [LZ4_COLUMNS.map(([table]) => table), LZ4_COLUMNS.map(([, column]) => column)],
  );
  const without = new Set(rows.filter((row) => row.method !== 'l').map((row) => `${row.table}.${row.column}`));
  return LZ4_COLUMNS.filter(([table, column]) => without.has(`${table}.${column}`));
}
