import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Campaigns (`/sender/*`, see CampaignRepository):
 * - campaign_folders: one row per campaign of an instance, its pacing (delay_min/max seconds between
 *   its own sends), start time, status (scheduled, sending, paused, done, deleting) and the release
 *   state: `released_message_id` is the one message of the folder handed to send_queue and not yet
 *   finished; `next_at` is when the next one may be released (completion + the folder's random gap).
 * - campaign_queue: the folder's messages not yet released, each with its whole SendRequest (ids fixed
 *   at accept; the `Queued` messages row exists from accept too). The CampaignScheduler moves the head
 *   into send_queue one at a time, so campaigns never block the instance's other async sends.
 * Counters are not stored: they are counted from messages.send_folder_id when read.
 */
export class Campaigns1763825000000 implements MigrationInterface {
  name = 'Campaigns1763825000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE campaign_folders (
        id text PRIMARY KEY,
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        name text NOT NULL DEFAULT '',
        info text NOT NULL DEFAULT '',
        status text NOT NULL DEFAULT 'scheduled',
        scheduled_for timestamptz NOT NULL DEFAULT now(),
        delay_min double precision NOT NULL DEFAULT 0,
        delay_max double precision NOT NULL DEFAULT 0,
        released_message_id text,
        next_at timestamptz,
        started_at timestamptz,
        finished_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE UNIQUE INDEX campaign_folders_name ON campaign_folders (instance_id, name) WHERE name <> ''`);
    await runner.query(`CREATE INDEX campaign_folders_due ON campaign_folders (scheduled_for) WHERE status IN ('scheduled', 'sending')`);
    await runner.query(`
      CREATE TABLE campaign_queue (
        id bigserial PRIMARY KEY,
        folder_id text NOT NULL REFERENCES campaign_folders (id) ON DELETE CASCADE,
        instance_id text NOT NULL,
        message_id text NOT NULL,
        request jsonb NOT NULL
      )`);
    await runner.query(`CREATE INDEX campaign_queue_folder ON campaign_queue (folder_id, id)`);
    await runner.query(`CREATE INDEX messages_send_folder ON messages (instance_id, send_folder_id) WHERE send_folder_id <> ''`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS messages_send_folder`);
    await runner.query(`DROP TABLE IF EXISTS campaign_queue`);
    await runner.query(`DROP TABLE IF EXISTS campaign_folders`);
  }
}
