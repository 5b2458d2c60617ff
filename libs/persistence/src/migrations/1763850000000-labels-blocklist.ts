import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the phone's app state and the account's blocklist say, kept so the API can answer without
 * asking WhatsApp (`GET /labels`, `GET /chat/blocklist` while disconnected):
 * - labels: one row per WhatsApp label id of an instance; a label deleted on the phone keeps its row
 *   with `deleted` (a later re-creation with the same id revives it). `id` is our record id.
 * - blocklist: the blocked contacts, by phone-number JID (the LID while the number is unknown).
 */
export class LabelsBlocklist1763850000000 implements MigrationInterface {
  name = 'LabelsBlocklist1763850000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE labels (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        label_id text NOT NULL,
        id text NOT NULL,
        name text NOT NULL DEFAULT '',
        color integer NOT NULL DEFAULT 0,
        deleted boolean NOT NULL DEFAULT false,
        predefined_id text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, label_id)
      )`);
    await runner.query(`
      CREATE TABLE blocklist (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        jid text NOT NULL,
        lid text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, jid)
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE blocklist`);
    await runner.query(`DROP TABLE labels`);
  }
}
