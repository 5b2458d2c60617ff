import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `outbox_cursors`: where each durable outbox consumer (the chatbot, the Chatwoot bridge, …) stands in
 * one instance's events, in the commit-safe `(tx, id)` order of migration 1763900000000. A consumer
 * process locks the row (`FOR UPDATE SKIP LOCKED`) while it turns the events after it into work rows,
 * and moves it in the same transaction, so each event becomes work exactly once however many processes
 * follow side by side. Retention keeps the events a cursor has not passed yet.
 */
export class OutboxCursors1764090000000 implements MigrationInterface {
  name = 'OutboxCursors1764090000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE outbox_cursors (
        consumer text NOT NULL,
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        tx bigint NOT NULL,
        id bigint NOT NULL,
        floor bigint NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (consumer, instance_id)
      )`);
    await runner.query(`CREATE INDEX outbox_cursors_instance ON outbox_cursors (instance_id)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE IF EXISTS outbox_cursors`);
  }
}
