import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops `messages_status (instance_id, status)`. No query uses it: /message/find filters on
 * `lower(status)` (not indexable by it), the campaign counters go through `messages_send_folder`, the
 * queue and the worker address single rows by their unique key. It cost an index entry on every
 * insert (the async accept path writes messages at thousands per second) and, worse, made every status
 * change (Queued → Pending → Sent → Delivered → Read) a non-HOT update that rewrites an entry in each
 * of the table's indexes.
 */
export class MessagesStatusIndex1763870000000 implements MigrationInterface {
  name = 'MessagesStatusIndex1763870000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS messages_status`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX IF NOT EXISTS messages_status ON messages (instance_id, status)`);
  }
}
