import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * WhatsApp's limits on starting new chats, per instance (see SendLimitRepository), and the sends the
 * async queue holds back because of them:
 * - send_limits: one row per instance and limit (`reachout_timelock`: the reach-out timelock, error
 *   463; `new_chat_cap`: the new-chat message cap, error 475) with its end (the lock's end, the cap's
 *   cycle end) and what WhatsApp said (enforcement type, quota), written by the worker that saw it (an
 *   error ack or the server's notification) and read by every dispatcher and gateway.
 * - send_queue.held_until: a queued send that would open a new chat while a limit applies waits until
 *   then; the sends behind it to other chats go on (takeHead skips it and any later send to its chat).
 */
export class SendLimits1764430000000 implements MigrationInterface {
  name = 'SendLimits1764430000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE IF NOT EXISTS send_limits (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        kind text NOT NULL,
        until timestamptz NOT NULL,
        detail text NOT NULL DEFAULT '',
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, kind)
      )`);
    await runner.query(`ALTER TABLE send_queue ADD COLUMN IF NOT EXISTS held_until timestamptz`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE send_queue DROP COLUMN IF EXISTS held_until`);
    await runner.query(`DROP TABLE IF EXISTS send_limits`);
  }
}
