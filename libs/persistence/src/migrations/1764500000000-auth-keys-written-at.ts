import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When each Signal key row was written, for the retention purge of the received plaintexts a socket
 * kept when it closed (ADR 0035): those rows had no owner left to delete them and lived until a logout.
 * Only the plaintexts are purged by age; the partial index holds only them (a few rows per instance).
 *
 * Expand only (ADR 0029): a new column with a constant-time default (Postgres 11+ stores `now()` of the
 * ALTER for the rows already there, no rewrite), so the previous version's inserts, which do not name
 * it, go on working, and its rows are aged from the migration on.
 */
export class AuthKeysWrittenAt1764500000000 implements MigrationInterface {
  name = 'AuthKeysWrittenAt1764500000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE auth_keys ADD COLUMN IF NOT EXISTS written_at timestamptz NOT NULL DEFAULT now()`);
    await runner.query(`CREATE INDEX IF NOT EXISTS auth_keys_plaintexts_written_at ON auth_keys (written_at) WHERE type = 'received-plaintext'`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS auth_keys_plaintexts_written_at`);
    await runner.query(`ALTER TABLE auth_keys DROP COLUMN IF EXISTS written_at`);
  }
}
