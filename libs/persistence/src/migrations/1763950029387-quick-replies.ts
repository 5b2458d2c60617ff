import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `quick_replies`: an instance's stored replies (`/quickreply/*`, `GET /quick-replies/{id}`). `message`
 * is the stored message (its `kind` and the body of that kind's send endpoint); a base64 file given
 * with it lives in `stored_files` (never expiring), named by `file_id`, its size in `file_size` so the
 * instance's total can be checked against its limit without reading the files.
 */
export class QuickReplies1763950029387 implements MigrationInterface {
  name = 'QuickReplies1763950029387';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE quick_replies (
        id text PRIMARY KEY,
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        short_cut text NOT NULL,
        ai_description text NOT NULL DEFAULT '',
        on_whatsapp boolean NOT NULL DEFAULT false,
        message jsonb NOT NULL,
        file_id text,
        file_size bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE INDEX quick_replies_instance ON quick_replies (instance_id, created_at, id)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE IF EXISTS quick_replies`);
  }
}
