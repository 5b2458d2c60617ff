import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The chatbot hears voice notes (issue #15): `chatbot_transcripts` keeps what a received voice note or
 * audio said, once transcribed, so the model sees its text in the rounds after (the chat's history)
 * without transcribing it again. Purged with the finished rounds (7 days).
 */
export class ChatbotTranscripts1764320000000 implements MigrationInterface {
  name = 'ChatbotTranscripts1764320000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE chatbot_transcripts (
        instance_id text NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
        message_id text NOT NULL,
        text text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (instance_id, message_id)
      )`);
    await runner.query(`CREATE INDEX chatbot_transcripts_created ON chatbot_transcripts (created_at)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE IF EXISTS chatbot_transcripts`);
  }
}
