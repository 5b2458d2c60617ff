import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery log (issue #40) is `webhook_deliveries` itself: one row per (target, event), now also
 * recording the last attempt's latency, the first and last attempt times, and the replay marker (when
 * and by which token a delivery was queued again). Nullable columns without a default: adding them
 * rewrites nothing, and a relay of the previous version (rolling deploy) neither reads nor writes
 * them. No new index: the log is read per target through the existing `UNIQUE (webhook_id,
 * event_id)` index, and every index on this table is paid by each fan-out and each result on the
 * relay's hot path (issue #38).
 */
export class DeliveryLog1764460000000 implements MigrationInterface {
  name = 'DeliveryLog1764460000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE webhook_deliveries
        ADD COLUMN IF NOT EXISTS first_attempt_at timestamptz,
        ADD COLUMN IF NOT EXISTS last_attempt_at timestamptz,
        ADD COLUMN IF NOT EXISTS latency_ms integer,
        ADD COLUMN IF NOT EXISTS replayed_at timestamptz,
        ADD COLUMN IF NOT EXISTS replay_origin text`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`
      ALTER TABLE webhook_deliveries
        DROP COLUMN IF EXISTS first_attempt_at,
        DROP COLUMN IF EXISTS last_attempt_at,
        DROP COLUMN IF EXISTS latency_ms,
        DROP COLUMN IF EXISTS replayed_at,
        DROP COLUMN IF EXISTS replay_origin`);
  }
}
