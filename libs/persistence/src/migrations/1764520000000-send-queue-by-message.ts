import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The queue's rows by their message: "does the queue still hold this send?" is asked by the unacked
 * sweep (every 5 s, for each message it answers), by a campaign's tick (each 500 ms per sending folder)
 * and when a campaign is cancelled. `send_queue_lane` is `(instance_id, id)`, so each such question read
 * every queued row (20,050 rows, 1.8 ms each with 20,000 queued; EXPLAIN ANALYZE on a seeded schema).
 * The columns a queued row's updates change (`held_until`, `attempts`, `last_error`) are not in it: they
 * stay HOT. Expand only (ADR 0029).
 */
export class SendQueueByMessage1764520000000 implements MigrationInterface {
  name = 'SendQueueByMessage1764520000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX IF NOT EXISTS send_queue_message ON send_queue (instance_id, message_id)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS send_queue_message`);
  }
}
