import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The documents written on the hot paths compress with lz4 instead of pglz (ADR 0071).
 *
 * A value over ~2 KB (a row over TOAST_TUPLE_THRESHOLD) is compressed before it is stored, with the
 * column's method, pglz by default. Every `messages` event is such a value (~2.5 KB of JSON with its
 * chat), and pglz is slow: 4,000 of them inserted took 255 ms against lz4's 150 and 120–140 uncompressed,
 * and reading them back 99 ms against 74 (docs/bench/inbound.md, session 62). lz4 keeps them as small
 * (1.6 KB against pglz's 1.4).
 *
 * `SET COMPRESSION` changes only how values written from now on are compressed: nothing is rewritten,
 * a value compressed either way reads the same, and a process of the release before neither knows nor
 * cares (expand only, ADR 0029). Each `ALTER` takes its table's exclusive lock for a moment, and every
 * statement on the table queues behind one that waits for it: so each runs on its own (no transaction
 * around the migration: a table's lock is held for its own statement only), waits at most LOCK_WAIT for
 * the lock (a long transaction on the table), and is tried again a few times before the migration fails
 * (the next start runs it again; setting lz4 twice changes nothing). A server built without lz4 (its
 * `default_toast_compression` does not offer it) keeps pglz.
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

/** How long one `ALTER` waits for its table's lock (statements on the table wait behind it meanwhile). */
const LOCK_WAIT = '1s';
/** Tries of one `ALTER` whose lock did not come, before the migration fails. */
const LOCK_TRIES = 10;

export class DocumentsLz41764550000000 implements MigrationInterface {
  name = 'DocumentsLz41764550000000';
  /** Each statement on its own: a table's lock is not held while the next table's is awaited. */
  transaction = false;

  async up(runner: QueryRunner): Promise<void> {
    if (!(await lz4Available(runner))) return;
    await runner.query(`SET lock_timeout = '${LOCK_WAIT}'`);
    try {
      for (const [table, column] of LZ4_COLUMNS) await withLockRetries(runner, `ALTER TABLE ${table} ALTER COLUMN ${column} SET COMPRESSION lz4`);
    } finally {
      // The connection goes back to the pool afterwards.
      await runner.query(`RESET lock_timeout`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const [table, column] of LZ4_COLUMNS) await runner.query(`ALTER TABLE ${table} ALTER COLUMN ${column} SET COMPRESSION default`);
  }
}

/** Runs `sql`, again after a pause while its lock did not come in time (55P03, lock_not_available). */
async function withLockRetries(runner: QueryRunner, sql: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await runner.query(sql);
      return;
    } catch (error) {
      const code = (error as { code?: string; driverError?: { code?: string } }).driverError?.code ?? (error as { code?: string }).code;
      if (code !== '55P03' || attempt >= LOCK_TRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 + Math.floor(Math.random() * 300)));
    }
  }
}

/** Whether this server was built with lz4 (PostgreSQL 14 or later, `--with-lz4`). */
async function lz4Available(runner: QueryRunner): Promise<boolean> {
  const rows: Array<{ lz4: boolean }> = await runner.query(`SELECT 'lz4' = ANY (enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'`);
  return rows[0]?.lz4 === true;
}
