import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Contacts by LID: every received message observes its sender (ContactRepository.observeWithin), whose
 * read matches the JID or the LID; without an index on the LID that read scanned all of the instance's
 * contacts by the primary key's prefix (thousands of rows for a busy number, on every message). Not
 * partial: the statements compare `lid = $n` with a parameter, which a partial index on `lid <> ''`
 * could not be proven to cover in a prepared (generic) plan.
 */
export class ContactsLidIndex1764360000000 implements MigrationInterface {
  name = 'ContactsLidIndex1764360000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX IF NOT EXISTS contacts_lid ON contacts (instance_id, lid)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS contacts_lid`);
  }
}
