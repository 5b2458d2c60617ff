import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Chatwoot bridge (issue #16):
 * - `chatwoot_configs`: an instance's `PUT /chatwoot/config`, with the secret of its webhook URL.
 * - `chatwoot_jobs`: durable work both ways (a WhatsApp event to copy into Chatwoot, an agent's reply to
 *   send on WhatsApp), unique per `dedupe_key` (the outbox event id, the Chatwoot message id and event),
 *   run in id order per `lane` (one conversation) with retries; done rows stay a while so a redelivered
 *   webhook still finds its key.
 * - `chatwoot_messages`: WhatsApp message id ↔ Chatwoot message id, the exactly-once record both ways.
 * - `chatwoot_chats`: the Chatwoot contact and conversation of a chat (phone JID, else LID, or group).
 */
export class Chatwoot1764140000000 implements MigrationInterface {
  name = 'Chatwoot1764140000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE chatwoot_configs (
        instance_id text PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
        enabled boolean NOT NULL,
        url text NOT NULL,
        access_token text NOT NULL,
        account_id bigint NOT NULL,
        inbox_id bigint NOT NULL,
        ignore_groups boolean NOT NULL DEFAULT false,
        sign_messages boolean NOT NULL DEFAULT false,
        create_new_conversation boolean NOT NULL DEFAULT false,
        webhook_secret text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`
      CREATE TABLE chatwoot_jobs (
        id bigserial PRIMARY KEY,
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        lane text NOT NULL,
        kind text NOT NULL,
        dedupe_key text NOT NULL,
        payload jsonb NOT NULL,
        attempts int NOT NULL DEFAULT 0,
        run_after timestamptz NOT NULL DEFAULT now(),
        claimed_by text,
        claimed_until timestamptz,
        last_error text NOT NULL DEFAULT '',
        done_at timestamptz,
        outcome text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (instance_id, dedupe_key)
      )`);
    await runner.query(`CREATE INDEX chatwoot_jobs_pending ON chatwoot_jobs (instance_id, lane, id) WHERE done_at IS NULL`);
    await runner.query(`CREATE INDEX chatwoot_jobs_done ON chatwoot_jobs (done_at) WHERE done_at IS NOT NULL`);
    await runner.query(`
      CREATE TABLE chatwoot_messages (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        wa_message_id text NOT NULL,
        cw_message_id bigint,
        cw_conversation_id bigint,
        origin text NOT NULL,
        chat_jid text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, wa_message_id)
      )`);
    await runner.query(`CREATE INDEX chatwoot_messages_cw ON chatwoot_messages (instance_id, cw_message_id) WHERE cw_message_id IS NOT NULL`);
    await runner.query(`
      CREATE TABLE chatwoot_chats (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        chat_key text NOT NULL,
        contact_id bigint NOT NULL,
        contact_name text NOT NULL DEFAULT '',
        source_id text NOT NULL DEFAULT '',
        conversation_id bigint,
        conversation_status text NOT NULL DEFAULT '',
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, chat_key)
      )`);
    await runner.query(`CREATE INDEX chatwoot_chats_conversation ON chatwoot_chats (instance_id, conversation_id)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE IF EXISTS chatwoot_chats`);
    await runner.query(`DROP TABLE IF EXISTS chatwoot_messages`);
    await runner.query(`DROP TABLE IF EXISTS chatwoot_jobs`);
    await runner.query(`DROP TABLE IF EXISTS chatwoot_configs`);
  }
}
