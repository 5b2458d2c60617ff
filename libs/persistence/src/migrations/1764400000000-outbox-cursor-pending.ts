import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `outbox_cursors.pending`: the transactions a durable consumer's cursor has moved past while they were
 * still running (ADR 0020). Until now a step read only rows of transactions older than its snapshot's
 * xmin, the oldest transaction running anywhere in the cluster, so one long or slow transaction (another
 * process's group write, an operator's open psql session) held every consumer's events back, committed
 * or not. A step now reads every committed row after the cursor and keeps the ids of the transactions
 * still running below its new position here; their rows are read once those transactions end. Each
 * event is still handed over exactly once.
 */
export class OutboxCursorPending1764400000000 implements MigrationInterface {
  name = 'OutboxCursorPending1764400000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE outbox_cursors ADD COLUMN pending bigint[] NOT NULL DEFAULT '{}'`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE outbox_cursors DROP COLUMN IF EXISTS pending`);
  }
}
