import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Lists the messages that were waiting for their ack before `unacked_sends` existed (migration
 * 1764510000000, which committed its trigger first: every send relayed since is listed already; a row
 * listed twice is kept once). Reads the whole `messages` table once, with no lock that holds its writes
 * back. A message acked meanwhile is dropped from the list by the next sweep.
 */
export class UnackedSendsSeed1764510000001 implements MigrationInterface {
  name = 'UnackedSendsSeed1764510000001';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      INSERT INTO unacked_sends (instance_id, message_id, relayed_at)
      SELECT instance_id, message_id, relayed_at FROM messages WHERE status = 'Pending' AND from_me AND relayed_at IS NOT NULL
      ON CONFLICT (instance_id, message_id) DO NOTHING`);
  }

  async down(): Promise<void> {
    // The rows go with the table (1764510000000's down).
  }
}
