import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The chatbot (issue #15).
 * - `chatbot_records`: an instance's agents, triggers, knowledge and functions (uazapi 2.0 §2.17), each
 *   record's API fields in `data` (secrets included: they are masked on the way out, never stored masked).
 * - `chatbot_knowledge_chunks`: a knowledge record cut into chunks, each with its unit-length embedding;
 *   retrieval is a dot product in SQL.
 * - `chatbot_rounds`: durable work. The outbox follower's handler writes a round (or adds the contact's next
 *   message to the one still gathering) in the transaction that moves its cursor; runners claim due rounds
 *   with FOR UPDATE SKIP LOCKED, one per chat at a time, and store the model's result and the planned
 *   message ids (`plan`) before anything is sent.
 * - `chatbot_inputs`: which round each received message went to (a message is admitted once).
 * - `chatbot_chat_state`: the trigger a chat's conversation runs under, and when it last ran.
 */
export class Chatbot1764130000000 implements MigrationInterface {
  name = 'Chatbot1764130000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE chatbot_records (
        id text PRIMARY KEY,
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        kind text NOT NULL CHECK (kind IN ('agent', 'trigger', 'knowledge', 'function')),
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE INDEX chatbot_records_instance ON chatbot_records (instance_id, kind, created_at, id)`);
    await runner.query(`
      CREATE TABLE chatbot_knowledge_chunks (
        knowledge_id text NOT NULL REFERENCES chatbot_records (id) ON DELETE CASCADE,
        ord integer NOT NULL,
        instance_id text NOT NULL,
        text text NOT NULL,
        embedding real[] NOT NULL,
        PRIMARY KEY (knowledge_id, ord)
      )`);
    await runner.query(`CREATE INDEX chatbot_knowledge_chunks_instance ON chatbot_knowledge_chunks (instance_id)`);
    await runner.query(`
      CREATE TABLE chatbot_rounds (
        id bigserial PRIMARY KEY,
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        chat_id text NOT NULL,
        trigger_id text NOT NULL,
        agent_id text NOT NULL,
        status text NOT NULL DEFAULT 'gathering' CHECK (status IN ('gathering', 'running', 'done', 'failed', 'canceled')),
        due_at timestamptz NOT NULL,
        inputs jsonb NOT NULL DEFAULT '[]'::jsonb,
        envelope jsonb NOT NULL DEFAULT '{}'::jsonb,
        received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        claimed_by text,
        claimed_until timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        plan jsonb,
        outcome text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await runner.query(`CREATE INDEX chatbot_rounds_open ON chatbot_rounds (due_at, id) WHERE status IN ('gathering', 'running')`);
    await runner.query(`CREATE INDEX chatbot_rounds_chat ON chatbot_rounds (instance_id, chat_id, id) WHERE status IN ('gathering', 'running')`);
    await runner.query(`
      CREATE TABLE chatbot_inputs (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        message_id text NOT NULL,
        round_id bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, message_id)
      )`);
    await runner.query(`
      CREATE TABLE chatbot_chat_state (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        chat_id text NOT NULL,
        trigger_id text NOT NULL,
        agent_id text NOT NULL,
        last_trigger_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, chat_id)
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE IF EXISTS chatbot_chat_state`);
    await runner.query(`DROP TABLE IF EXISTS chatbot_inputs`);
    await runner.query(`DROP TABLE IF EXISTS chatbot_rounds`);
    await runner.query(`DROP TABLE IF EXISTS chatbot_knowledge_chunks`);
    await runner.query(`DROP TABLE IF EXISTS chatbot_records`);
  }
}
