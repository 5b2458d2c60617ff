import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Messages whose sender is known only by its LID (`sender_pn` empty). When a LID's phone number is
 * learnt, LidMappingRepository fills in `sender_pn` of the instance's messages from that LID
 * (`sender_lid = … AND sender_pn = ''`); with no index on `sender_lid` every newly learnt pair scanned
 * every message of the instance. Partial: only the unresolved rows, a small share of a busy table, and
 * the statement names the same condition as a literal.
 */
export class MessagesUnresolvedSenderIndex1764440000000 implements MigrationInterface {
  name = 'MessagesUnresolvedSenderIndex1764440000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX IF NOT EXISTS messages_unresolved_sender ON messages (instance_id, sender_lid) WHERE sender_pn = '' AND sender_lid <> ''`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS messages_unresolved_sender`);
  }
}
