import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two fields of the spec's Message record that had nowhere to live: `callPeer` (the known contact of a
 * call, on messages of messageType `call`) and `ai_metadata` (what an AI agent's round recorded). Both
 * are absent (NULL) on every other message, so adding them rewrites nothing.
 */
export class MessageCallPeerAiMetadata1763895000000 implements MigrationInterface {
  name = 'MessageCallPeerAiMetadata1763895000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE messages ADD COLUMN IF NOT EXISTS call_peer jsonb, ADD COLUMN IF NOT EXISTS ai_metadata jsonb`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE messages DROP COLUMN IF EXISTS call_peer, DROP COLUMN IF EXISTS ai_metadata`);
  }
}
