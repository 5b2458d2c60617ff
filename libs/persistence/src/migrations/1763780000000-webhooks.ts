import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhooks (per instance and global), their durable deliveries and error log, and outbox fan-out. */
export class Webhooks1763780000000 implements MigrationInterface {
  name = 'Webhooks1763780000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE webhooks (
        id text PRIMARY KEY,
        -- NULL: the operator's global webhook, which receives every instance's events
        instance_id text REFERENCES instances (id) ON DELETE CASCADE,
        url text NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        events text[] NOT NULL DEFAULT '{}',
        exclude_messages text[] NOT NULL DEFAULT '{}',
        add_url_events boolean NOT NULL DEFAULT false,
        add_url_types_messages boolean NOT NULL DEFAULT false,
        include_token boolean NOT NULL DEFAULT false,
        secret text NOT NULL,
        failing_since timestamptz,
        disabled_reason text NOT NULL DEFAULT '',
        created timestamptz NOT NULL DEFAULT now(),
        updated timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE INDEX webhooks_instance ON webhooks (instance_id)`);

    await runner.query(`
      CREATE TABLE webhook_deliveries (
        id bigserial PRIMARY KEY,
        webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event_id bigint NOT NULL,
        instance_id text NOT NULL,
        chat_id text NOT NULL DEFAULT '',
        event_type text NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        -- a relay that claimed the delivery owns it until then; a crash lets it lapse
        claimed_until timestamptz,
        last_status_code integer,
        last_error text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        UNIQUE (webhook_id, event_id)
      )`);
    // The claim looks for the oldest pending delivery of each (webhook, instance, chat) lane.
    await runner.query(`CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, instance_id, chat_id, id) WHERE status = 'pending'`);
    await runner.query(`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`);

    await runner.query(`
      CREATE TABLE webhook_errors (
        id bigserial PRIMARY KEY,
        webhook_id text,
        instance_id text,
        global boolean NOT NULL,
        url text NOT NULL,
        event text NOT NULL,
        message_type text NOT NULL DEFAULT '',
        status_code integer,
        attempts integer NOT NULL,
        error text NOT NULL,
        payload jsonb NOT NULL,
        created timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE INDEX webhook_errors_instance ON webhook_errors (instance_id, id DESC)`);
    await runner.query(`CREATE INDEX webhook_errors_global ON webhook_errors (global, id DESC)`);

    // Fan-out marks each event once it has its deliveries. A flag rather than a cursor: ids of a
    // bigserial can commit out of order, and a cursor would skip an id that commits late.
    await runner.query(`ALTER TABLE outbox_events ADD COLUMN dispatched_at timestamptz`);
    await runner.query(`UPDATE outbox_events SET dispatched_at = now()`);
    await runner.query(`CREATE INDEX outbox_events_undispatched ON outbox_events (id) WHERE dispatched_at IS NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE outbox_events DROP COLUMN IF EXISTS dispatched_at`);
    for (const table of ['webhook_errors', 'webhook_deliveries', 'webhooks']) await runner.query(`DROP TABLE IF EXISTS ${table}`);
  }
}
