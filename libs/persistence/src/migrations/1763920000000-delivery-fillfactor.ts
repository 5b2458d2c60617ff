import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `webhook_deliveries`: fillfactor 70 and early autovacuum.
 *
 * Each delivery row is written three times (inserted, claimed, finished). Free space on each page
 * lets the claim (`claimed_until`, in no index) be a HOT update, and vacuum/analyze run far sooner
 * than the defaults (20% / 10% of the table), as for any queue table with a churning head. Mid-bench
 * the table had more dead rows than live ones and no autovacuum had run yet; the claim's UPDATE of
 * 500 rows took 50 of its 100 ms, each one a non-HOT update touching three indexes.
 *
 * This was first added to DeliveryLanes1763840000000 after that migration had shipped, so databases
 * that had already run it never got it. Setting the same storage parameters again changes nothing,
 * so a database that ran the edited version ends in the same state as a fresh one.
 */
export class DeliveryFillfactor1763920000000 implements MigrationInterface {
  name = 'DeliveryFillfactor1763920000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE webhook_deliveries SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE webhook_deliveries RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor)`);
  }
}
