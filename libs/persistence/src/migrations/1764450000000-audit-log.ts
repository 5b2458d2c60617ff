import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * audit_log: one row per admin or configuration change made through the API (see AuditRepository):
 * when, which token (`actor`: the instance's id for an instance token, `admin` for the admin token,
 * never a token's value), from which address, the route and its action name, the request's fields
 * with their secrets masked, and the answer's status. No foreign key to instances: an instance's
 * deletion is itself audited and its entries outlive it until the retention purge (AUDIT_RETENTION_DAYS).
 * Indexes for the filters of GET /admin/audit and GET /instance/audit, newest first (id order).
 */
export class AuditLog1764450000000 implements MigrationInterface {
  name = 'AuditLog1764450000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE IF NOT EXISTS audit_log (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        actor text NOT NULL,
        instance_id text,
        address text NOT NULL DEFAULT '',
        method text NOT NULL,
        route text NOT NULL,
        action text NOT NULL,
        changes jsonb NOT NULL DEFAULT '{}'::jsonb,
        status integer NOT NULL
      )`);
    await runner.query(`CREATE INDEX IF NOT EXISTS audit_log_instance ON audit_log (instance_id, id)`);
    await runner.query(`CREATE INDEX IF NOT EXISTS audit_log_action ON audit_log (action, id)`);
    await runner.query(`CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log (at)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE IF EXISTS audit_log`);
  }
}
