import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The sends the unacked sweep looks at (issue 34's "never stuck Pending", docs/guarantees.md), kept apart
 * from `messages` so that the sweep reads only them.
 *
 * The sweep ran every 5 s on every worker, over every instance it held, and asked `messages` for the rows
 * still `Pending` that went out. No index has `status` (1763870000000 dropped it so that a status change
 * stays a HOT update), so Postgres read every message of those instances each time: 30,060 rows in 65 ms
 * for one instance with a history of 30,000 (EXPLAIN ANALYZE after bench/history), 50 million rows every
 * 5 s for a worker of 500 instances with 100,000 messages each. An index that names `status`, even only in
 * its predicate, would make every status change rewrite an entry in each of the table's eight indexes.
 *
 * `unacked_sends` holds a row per message of ours that went out (`relayed_at` set), written by a trigger
 * on `messages` in the statement that sets it, whichever version of the worker writes (a rolling deploy
 * runs old and new side by side: an old worker's sends are swept by a new one), and only for such rows
 * (the trigger's `WHEN` is checked without calling its function: a received or history message costs
 * nothing). The sweep deletes the rows whose message is no longer waiting for its ack (acked, failed,
 * unrelayed, gone) as it meets them, so the table holds the last half-minute of sends and the unacked
 * ones. A message re-relayed meanwhile gets a new `relayed_at`, and the sweep only deletes the row it
 * read (same `relayed_at`). Rows go with their message (foreign key, on delete cascade).
 *
 * Expand only (ADR 0029): the previous version never reads the table, and its sweep still reads `messages`.
 * The messages waiting for their ack now are copied in by the next migration, in a transaction of its own:
 * here the trigger's lock on `messages` (which holds its writes back) lasts only as long as these few
 * statements, not as long as a read of the whole table.
 */
export class UnackedSends1764510000000 implements MigrationInterface {
  name = 'UnackedSends1764510000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE IF NOT EXISTS unacked_sends (
        instance_id text NOT NULL,
        message_id text NOT NULL,
        relayed_at timestamptz NOT NULL,
        PRIMARY KEY (instance_id, message_id),
        FOREIGN KEY (instance_id, message_id) REFERENCES messages (instance_id, message_id) ON DELETE CASCADE ON UPDATE CASCADE
      )`);
    await runner.query(`
      CREATE OR REPLACE FUNCTION messages_unacked_send() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO unacked_sends (instance_id, message_id, relayed_at) VALUES (NEW.instance_id, NEW.message_id, NEW.relayed_at)
        ON CONFLICT (instance_id, message_id) DO UPDATE SET relayed_at = EXCLUDED.relayed_at;
        RETURN NULL;
      END $$`);
    await runner.query(`DROP TRIGGER IF EXISTS messages_unacked_send_insert ON messages`);
    await runner.query(`DROP TRIGGER IF EXISTS messages_unacked_send_update ON messages`);
    await runner.query(`
      CREATE TRIGGER messages_unacked_send_insert AFTER INSERT ON messages FOR EACH ROW
      WHEN (NEW.from_me AND NEW.relayed_at IS NOT NULL) EXECUTE FUNCTION messages_unacked_send()`);
    await runner.query(`
      CREATE TRIGGER messages_unacked_send_update AFTER UPDATE OF relayed_at ON messages FOR EACH ROW
      WHEN (NEW.from_me AND NEW.relayed_at IS NOT NULL AND NEW.relayed_at IS DISTINCT FROM OLD.relayed_at) EXECUTE FUNCTION messages_unacked_send()`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TRIGGER IF EXISTS messages_unacked_send_insert ON messages`);
    await runner.query(`DROP TRIGGER IF EXISTS messages_unacked_send_update ON messages`);
    await runner.query(`DROP FUNCTION IF EXISTS messages_unacked_send()`);
    await runner.query(`DROP TABLE IF EXISTS unacked_sends`);
  }
}
