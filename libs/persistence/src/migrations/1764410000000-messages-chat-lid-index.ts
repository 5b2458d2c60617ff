import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Messages by the chat's LID. A chat's messages are read by its phone JID or its LID (`chat_id = $n OR
 * chat_lid = $n`: /message/find by `chatid`, the chatbot's history of every round, marking a chat read,
 * deleting a chat's messages); with no index on `chat_lid` the OR could use none, and each such read
 * scanned every message of the instance (a seq scan once the statistics knew the table). Not partial,
 * for the prepared (generic) plans, as contacts_lid (1764360000000). A status change does not touch
 * the column, so it stays a HOT update.
 */
export class MessagesChatLidIndex1764410000000 implements MigrationInterface {
  name = 'MessagesChatLidIndex1764410000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX IF NOT EXISTS messages_chat_lid ON messages (instance_id, chat_lid, message_timestamp DESC)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS messages_chat_lid`);
  }
}
