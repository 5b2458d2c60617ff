import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Instances, Baileys auth state, session leases and workers, settings, and the event outbox. */
export class InitialSchema1763760000000 implements MigrationInterface {
  name = 'InitialSchema1763760000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE instances (
        id text PRIMARY KEY,
        token text NOT NULL,
        name text NOT NULL,
        status text NOT NULL DEFAULT 'disconnected',
        desired_state text NOT NULL DEFAULT 'disconnected',
        paired boolean NOT NULL DEFAULT false,
        paircode text NOT NULL DEFAULT '',
        qrcode text NOT NULL DEFAULT '',
        pairing_expires_at timestamptz,
        profile_name text NOT NULL DEFAULT '',
        profile_pic_url text NOT NULL DEFAULT '',
        is_business boolean NOT NULL DEFAULT false,
        platform text NOT NULL DEFAULT '',
        system_name text NOT NULL DEFAULT '',
        browser text NOT NULL DEFAULT '',
        owner text NOT NULL DEFAULT '',
        jid text NOT NULL DEFAULT '',
        lid text NOT NULL DEFAULT '',
        last_disconnect timestamptz,
        last_disconnect_reason text NOT NULL DEFAULT '',
        admin_field01 text NOT NULL DEFAULT '',
        admin_field02 text NOT NULL DEFAULT '',
        openai_apikey text NOT NULL DEFAULT '',
        chatbot_enabled boolean NOT NULL DEFAULT false,
        chatbot_ignore_groups boolean NOT NULL DEFAULT false,
        chatbot_stop_conversation text NOT NULL DEFAULT '',
        chatbot_stop_minutes integer NOT NULL DEFAULT 0,
        chatbot_stop_when_you_send_msg integer NOT NULL DEFAULT 0,
        fields_map jsonb NOT NULL DEFAULT '{}'::jsonb,
        msg_delay_min integer NOT NULL DEFAULT 0,
        msg_delay_max integer NOT NULL DEFAULT 0,
        current_presence text NOT NULL DEFAULT 'available',
        history_days integer NOT NULL DEFAULT 90,
        history_full_sync boolean NOT NULL DEFAULT false,
        pairing_request_id text NOT NULL DEFAULT '',
        proxy jsonb,
        created timestamptz NOT NULL DEFAULT now(),
        updated timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE UNIQUE INDEX instances_token_key ON instances (token)`);
    // Workers scan for sessions nobody holds; only instances that want one matter.
    await runner.query(`CREATE INDEX instances_wanting_session ON instances (id) WHERE desired_state = 'connected'`);

    await runner.query(`
      CREATE TABLE auth_creds (
        instance_id text PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
        value text NOT NULL
      )`);
    await runner.query(`
      CREATE TABLE auth_keys (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        type text NOT NULL,
        key_id text NOT NULL,
        value text NOT NULL,
        PRIMARY KEY (instance_id, type, key_id)
      )`);

    await runner.query(`
      CREATE TABLE session_leases (
        instance_id text PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
        worker_id text NOT NULL,
        fencing_token bigint NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
    await runner.query(`CREATE INDEX session_leases_worker ON session_leases (worker_id)`);
    await runner.query(`
      CREATE TABLE session_workers (
        id text PRIMARY KEY,
        capacity integer NOT NULL,
        heartbeat_at timestamptz NOT NULL
      )`);

    await runner.query(`CREATE TABLE settings (key text PRIMARY KEY, value text NOT NULL)`);

    await runner.query(`
      CREATE TABLE outbox_events (
        id bigserial PRIMARY KEY,
        instance_id text NOT NULL,
        event_type text NOT NULL,
        chat_id text NOT NULL DEFAULT '',
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE INDEX outbox_events_instance ON outbox_events (instance_id, id)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['outbox_events', 'settings', 'session_workers', 'session_leases', 'auth_keys', 'auth_creds', 'instances']) {
      await runner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
