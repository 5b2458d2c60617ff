import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `outbox_events.traceparent` (issue #40): the W3C `traceparent` of the span that wrote the event (a
 * received message's store span), so the webhook relay continues that trace when it delivers the event.
 * Beside the payload, not in it: the public event body stays as it was. Nullable and without default:
 * adding it rewrites nothing, a relay or worker of the previous version neither writes nor reads it
 * (expand only), and with tracing off every row keeps NULL.
 */
export class OutboxTraceparent1764480000000 implements MigrationInterface {
  name = 'OutboxTraceparent1764480000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE outbox_events ADD COLUMN IF NOT EXISTS traceparent text`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE outbox_events DROP COLUMN IF EXISTS traceparent`);
  }
}
