import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A new message whose record id (`messages.id`, `r` + 7 hex: 2^28 values) is already taken in its
 * instance gets a fresh one from the table itself (issue #38, ADR 0040): a BEFORE INSERT row trigger
 * replaces a taken id with `r` + 7 random hex, a few tries at most (past them the primary key reports the
 * clash as before). Every insert path is covered by construction — the send reserve, the async accept,
 * received copies, history chunks, COPY — instead of each statement carrying its own check; the callers
 * answer with the id RETURNING gives. An upsert that ends in ON CONFLICT (instance_id, message_id) keeps
 * the stored row's id (the trigger only changes the row that was not inserted).
 *
 * Expand only (ADR 0029): no column or constraint changes. A process of the previous version inserting
 * a taken id now succeeds where it failed with `messages_pkey` (its async accept retried on that error
 * and now never sees it); only its grouped async accept (enqueueMany) answers the id it drew instead of
 * the stored one, as this release no longer does.
 */
export class MessagesFreshTakenId1764490000000 implements MigrationInterface {
  name = 'MessagesFreshTakenId1764490000000';

  async up(runner: QueryRunner): Promise<void> {
    // The lookup must read the primary key's index, whatever the table's statistics: its plan is cached
    // for the session, and a plan made while the table looked empty (a sequential scan, or another index
    // on instance_id alone: equal costs at that size) made each insert read every row of its instance —
    // 10,000 inserts into a fresh table took 54 s instead of 3 s. So: one generic plan, no sequential or
    // bitmap scan, and the row comparison only the primary key's index can use as its condition.
    await runner.query(`
      CREATE OR REPLACE FUNCTION messages_fresh_taken_id() RETURNS trigger LANGUAGE plpgsql
      SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off AS $$
      DECLARE
        tries int := 0;
      BEGIN
        -- A row inserted earlier by the same statement counts too.
        WHILE tries < 5 AND EXISTS (
          SELECT 1 FROM messages WHERE instance_id = NEW.instance_id AND id = NEW.id AND (instance_id, id) >= (NEW.instance_id, NEW.id)
        ) LOOP
          NEW.id := 'r' || lpad(to_hex(floor(random() * 268435456)::int), 7, '0');
          tries := tries + 1;
        END LOOP;
        RETURN NEW;
      END $$`);
    await runner.query(`DROP TRIGGER IF EXISTS messages_fresh_taken_id ON messages`);
    await runner.query(`CREATE TRIGGER messages_fresh_taken_id BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION messages_fresh_taken_id()`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TRIGGER IF EXISTS messages_fresh_taken_id ON messages`);
    await runner.query(`DROP FUNCTION IF EXISTS messages_fresh_taken_id()`);
  }
}
