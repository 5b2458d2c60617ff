import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The device lists an instance's last holder had cached (its contacts' devices, each with its expiry):
 * written when a session worker hands the instance over (a drain, a rebalance's move, a shutdown) and
 * read by the worker that adopts it, so the heir's first send to each contact skips asking WhatsApp for
 * the devices again (sessions' socket/device-lists.ts). A row of its own, not a column of `instances`:
 * it may hold many lists, and `instances` is read on every request. Gone with its instance.
 * Expand only (ADR 0029): a worker of the release before neither writes nor reads it.
 */
export class InstanceDeviceLists1764540000000 implements MigrationInterface {
  name = 'InstanceDeviceLists1764540000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE IF NOT EXISTS instance_device_lists (
        instance_id text PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
        lists jsonb NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE IF EXISTS instance_device_lists`);
  }
}
