import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Event sinks (issue #18): a delivery target has a kind — `webhook` (HTTP, as before), `rabbitmq`,
 * `nats` or `kafka` — and the options of its transport (exchange and routing key, subject prefix and
 * stream, topic). Sinks are rows of `webhooks`, so fan-out, lanes, retries, disabling and the error
 * log stay one mechanism for every kind; the error log remembers the kind so each route lists its own.
 */
export class EventSinks1764160000000 implements MigrationInterface {
  name = 'EventSinks1764160000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE webhooks ADD COLUMN kind text NOT NULL DEFAULT 'webhook'`);
    await runner.query(`ALTER TABLE webhooks ADD COLUMN options jsonb NOT NULL DEFAULT '{}'`);
    await runner.query(`ALTER TABLE webhook_errors ADD COLUMN kind text NOT NULL DEFAULT 'webhook'`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE webhook_errors DROP COLUMN IF EXISTS kind`);
    await runner.query(`ALTER TABLE webhooks DROP COLUMN IF EXISTS options`);
    await runner.query(`ALTER TABLE webhooks DROP COLUMN IF EXISTS kind`);
  }
}
