import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A chat marked unread (WhatsApp's badge) counts one unread without an unread message behind it. The
 * flag tells that one apart from a real unread message, so the next message that arrives makes the
 * count 1 (as WhatsApp shows it), not 2; reading the chat clears it.
 */
export class ChatMarkedUnread1764190000000 implements MigrationInterface {
  name = 'ChatMarkedUnread1764190000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE chats ADD COLUMN marked_unread boolean NOT NULL DEFAULT false`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE chats DROP COLUMN marked_unread`);
  }
}
