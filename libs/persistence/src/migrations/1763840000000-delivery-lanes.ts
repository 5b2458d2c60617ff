import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook deliveries are claimed lane by lane (see DeliveryRepository.claimDue):
 * - A lane (webhook, instance, chat) is ordered by `event_id`, the outbox order, and no longer by the
 *   delivery's own id: two relays fanning out side by side can insert a later event's delivery first.
 * - One index serves the whole claim: walking it lists the head (oldest pending delivery) of every
 *   lane with one probe per lane, whatever the backlog behind the heads, and gives each lane's run.
 * - The claim no longer looks at `next_attempt_at` through an index (only at the lane heads it found),
 *   so the old due index is dropped: one index less to write per delivery.
 */
export class DeliveryLanes1763840000000 implements MigrationInterface {
  name = 'DeliveryLanes1763840000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX webhook_deliveries_lanes ON webhook_deliveries (webhook_id, instance_id, chat_id, event_id) WHERE status = 'pending'`);
    await runner.query(`DROP INDEX IF EXISTS webhook_deliveries_pending`);
    await runner.query(`DROP INDEX IF EXISTS webhook_deliveries_due`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE INDEX IF NOT EXISTS webhook_deliveries_pending ON webhook_deliveries (webhook_id, instance_id, chat_id, id) WHERE status = 'pending'`,
    );
    await runner.query(`CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`);
    await runner.query(`DROP INDEX IF EXISTS webhook_deliveries_lanes`);
  }
}
