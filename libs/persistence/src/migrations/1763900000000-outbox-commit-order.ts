import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbox readers that follow a cursor (SSE, `Last-Event-ID`) need a position that a late commit can
 * never land behind. The row id cannot be that position: ids are taken at insert, so a transaction
 * holding id 10 can commit after another one's id 11 has been read, and `id > 11` would never see 10.
 *
 * Each row now records `tx`, the id of the (top-level) transaction that wrote it (`pg_current_xact_id()`,
 * 64-bit, never wraps). A reader only takes rows whose `tx` is below its snapshot's xmin: every such
 * transaction has finished, so all of its rows are already visible, and any transaction still running
 * or not yet started has a `tx` at or above that xmin. Read in `(tx, id)` order, the set of readable
 * rows only ever grows at the end, so a cursor over `(tx, id)` skips nothing (OutboxRepository.readSettled).
 * The cost: a long transaction anywhere in the cluster delays cursor readers until it ends (latency,
 * never loss). Rows written before this migration get `tx = 0` and keep their id order.
 */
export class OutboxCommitOrder1763900000000 implements MigrationInterface {
  name = 'OutboxCommitOrder1763900000000';

  async up(runner: QueryRunner): Promise<void> {
    // A constant default first (no table rewrite for existing rows), then the per-transaction one.
    await runner.query(`ALTER TABLE outbox_events ADD COLUMN tx bigint NOT NULL DEFAULT 0`);
    await runner.query(`ALTER TABLE outbox_events ALTER COLUMN tx SET DEFAULT (pg_current_xact_id()::text)::bigint`);
    // Replaces (instance_id, id): still serves every per-instance lookup, and the cursor read.
    await runner.query(`CREATE INDEX outbox_events_instance_tx ON outbox_events (instance_id, tx, id)`);
    await runner.query(`DROP INDEX IF EXISTS outbox_events_instance`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX IF NOT EXISTS outbox_events_instance ON outbox_events (instance_id, id)`);
    await runner.query(`DROP INDEX IF EXISTS outbox_events_instance_tx`);
    await runner.query(`ALTER TABLE outbox_events DROP COLUMN IF EXISTS tx`);
  }
}
