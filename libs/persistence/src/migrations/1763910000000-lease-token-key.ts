import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Makes `fencing_token` a key column of `session_leases` (a unique index over it), so the fence can
 * lock the lease row `FOR KEY SHARE` instead of `FOR SHARE`.
 *
 * Why: `FOR SHARE` conflicts with every UPDATE, including the holder's own renewal (`expires_at`).
 * One renewal statement covers all of a worker's leases; it waited behind every fenced write in
 * progress, and while it waited every new fenced write queued behind it: bench/send saw the whole
 * worker stall 134 ms per renewal. `FOR KEY SHARE` only conflicts with changes of key columns and
 * with deletes. A takeover changes `fencing_token` (now a key column), so it still waits for the
 * fenced writes in progress, exactly as before; a renewal (`expires_at` only) no longer does.
 *
 * The index is what keeps the fence sound: dropping it would let a takeover commit while a stale
 * holder's fenced write is in progress. libs/persistence/test/lease.repository.spec.ts pins both
 * behaviours ("a takeover waits", "a renewal does not").
 */
export class LeaseTokenKey1763910000000 implements MigrationInterface {
  name = 'LeaseTokenKey1763910000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE UNIQUE INDEX IF NOT EXISTS session_leases_fencing_key ON session_leases (instance_id, fencing_token)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS session_leases_fencing_key`);
  }
}
