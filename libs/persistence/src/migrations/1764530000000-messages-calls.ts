import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The instance's calls, newest first: `POST /call/reject` looks for the ringing call among the recent
 * ones (`message_type = 'call'`), and `/message/find` may filter by that type. No index had the type, so
 * each such request counted and sorted every message of the instance (43 + 9 ms for 65,000 messages
 * against 0.1 ms; EXPLAIN ANALYZE on a seeded schema). Partial: only calls have an entry, so any other
 * message's insert costs the predicate's check, and the type is never updated (status changes stay HOT).
 * Expand only (ADR 0029).
 */
export class MessagesCalls1764530000000 implements MigrationInterface {
  name = 'MessagesCalls1764530000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX IF NOT EXISTS messages_calls ON messages (instance_id, message_timestamp DESC) WHERE message_type = 'call'`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS messages_calls`);
  }
}
