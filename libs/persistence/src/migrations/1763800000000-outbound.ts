import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What the send path needs: a relayed marker per message, and staged files. */
export class Outbound1763800000000 implements MigrationInterface {
  name = 'Outbound1763800000000';

  async up(runner: QueryRunner): Promise<void> {
    // Set, under the lease, just before a message is handed to WhatsApp: a retry of the same id after
    // a crash sees it and does not relay again (at most once towards the network).
    await runner.query(`ALTER TABLE messages ADD COLUMN relayed_at timestamptz`);
    await runner.query(`
      CREATE TABLE stored_files (
        id text PRIMARY KEY,
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        mimetype text NOT NULL DEFAULT 'application/octet-stream',
        file_name text NOT NULL DEFAULT '',
        data bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await runner.query(`CREATE INDEX stored_files_expiry ON stored_files (expires_at)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE IF EXISTS stored_files`);
    await runner.query(`ALTER TABLE messages DROP COLUMN IF EXISTS relayed_at`);
  }
}
