import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The durable `async=true` send queue (see SendQueueRepository for every claim and what a crash
 * leaves behind). Two tables:
 * - send_queue: one row per accepted async send, holding the whole SendRequest (ids fixed at accept);
 *   `id` is the acceptance order. The row is deleted once the worker answered (Sent or Failed), when
 *   the retries are exhausted (Failed), or by DELETE /message/async (Canceled).
 * - send_lanes: one row per instance that ever queued: the per-instance claim (a lease: claimed_by +
 *   claimed_until, so a crashed dispatcher's claim lapses), the pacing state (when the previous send
 *   completed and the random point chosen in [msg_delay_min, msg_delay_max] for the next gap: the
 *   gap is computed from the instance's current settings at claim time, so a change applies to what
 *   is still queued), the send in flight, the retry wait and the reset marker of DELETE /message/async.
 */
export class SendQueue1763810000000 implements MigrationInterface {
  name = 'SendQueue1763810000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE send_queue (
        id bigserial PRIMARY KEY,
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        message_id text NOT NULL,
        request jsonb NOT NULL,
        -- failed hand-overs to the worker (timeouts and errors; a disconnected session does not count)
        attempts integer NOT NULL DEFAULT 0,
        last_error text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE INDEX send_queue_lane ON send_queue (instance_id, id)`);
    await runner.query(`
      CREATE TABLE send_lanes (
        instance_id text PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
        claimed_by text,
        claimed_until timestamptz,
        -- send_queue.id handed to the worker under the current claim (NULL between sends)
        in_flight_id bigint,
        last_sent_at timestamptz,
        gap_fraction double precision NOT NULL DEFAULT random(),
        -- head waits until then (disconnected session, backoff after an error)
        retry_at timestamptz NOT NULL DEFAULT '-infinity',
        resetting_until timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE IF EXISTS send_lanes`);
    await runner.query(`DROP TABLE IF EXISTS send_queue`);
  }
}
