import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Moving a session (issue #40): `exported_at` marks an instance whose session was exported to another
 * server. Its auth state is wiped in the same transaction and `/instance/connect` refuses it (two holders
 * of one linked device would log each other out, WhatsApp's 440 conflict). Expand only: a nullable column
 * that a gateway of the previous version ignores (its connect would start a new pairing, since there are
 * no credentials left to reuse).
 */
export class InstanceExported1764470000000 implements MigrationInterface {
  name = 'InstanceExported1764470000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE instances ADD COLUMN exported_at timestamptz`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE instances DROP COLUMN IF EXISTS exported_at`);
  }
}
