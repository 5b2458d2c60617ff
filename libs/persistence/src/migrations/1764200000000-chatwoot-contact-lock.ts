import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Chatwoot bridge never creates a contact twice (issue #16 review):
 * - `chatwoot_contact_locks`: a lease per instance held while the bridge finds or creates a contact or a
 *   conversation. Two lanes can name one person (the LID lane of messages received before the number was
 *   known, the number's lane after): without it both searched Chatwoot, found nothing and created two
 *   contacts. A lease row rather than an advisory lock: no database connection is held across the calls
 *   to Chatwoot, and a crashed holder's lease lapses by itself.
 * - `chatwoot_chats.lid`: the LID a chat kept under its phone number is also known by, so a job naming
 *   the chat only by its LID (its number not yet mapped on this instance) finds the same contact.
 */
export class ChatwootContactLock1764200000000 implements MigrationInterface {
  name = 'ChatwootContactLock1764200000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE chatwoot_contact_locks (
        instance_id text PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
        holder text NOT NULL,
        held_until timestamptz NOT NULL
      )`);
    await runner.query(`ALTER TABLE chatwoot_chats ADD COLUMN lid text NOT NULL DEFAULT ''`);
    await runner.query(`CREATE INDEX chatwoot_chats_lid ON chatwoot_chats (instance_id, lid) WHERE lid <> ''`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS chatwoot_chats_lid`);
    await runner.query(`ALTER TABLE chatwoot_chats DROP COLUMN IF EXISTS lid`);
    await runner.query(`DROP TABLE IF EXISTS chatwoot_contact_locks`);
  }
}
