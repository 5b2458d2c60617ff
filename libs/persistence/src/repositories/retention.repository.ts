import type { QueryRunner } from 'typeorm';
import { RepositoryBase } from './repository-base';

/** Advisory lock key of the retention purge (727_001 is the migration lock). */
const LOCK = 727_002;

/** The purges of the webhook bookkeeping; each returns how many rows it removed. */
export interface DeliveryLogPurge {
  /** Deliveries no longer pending, created (or last replayed) before `cutoff`. */
  deliveries(cutoff: Date): Promise<number>;
  /** Dispatched outbox events created before `cutoff`, unless a delivery of theirs is still pending. */
  events(cutoff: Date): Promise<number>;
  /** Delivery error log entries before `cutoff`. */
  errors(cutoff: Date): Promise<number>;
  /** Audit log entries recorded before `cutoff` (its own retention, AUDIT_RETENTION_DAYS). */
  audit(cutoff: Date): Promise<number>;
  /**
   * Received plaintexts (auth_keys type `received-plaintext`, the sessions' RECEIVED_PLAINTEXT) written
   * before `cutoff`: the ones a socket kept at its close, which nothing else deletes (ADR 0035).
   */
  plaintexts(cutoff: Date): Promise<number>;
}

/** The retention purge's own statements: one process at a time, and the old webhook bookkeeping. */
export class RetentionRepository extends RepositoryBase {
  /**
   * Runs `work` holding the retention advisory lock (session level, on a connection of its own that
   * the `purge` statements also use), so any number of processes may schedule the purge and one at a
   * time does it. Without running it, null when another process holds the lock. A crash releases the
   * lock with the connection.
   */
  async whileLocked<T>(work: (purge: DeliveryLogPurge) => Promise<T>): Promise<T | null> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }]: Array<{ locked: boolean }> = await runner.query(`SELECT pg_try_advisory_lock($1) AS locked`, [LOCK]);
      if (!locked) return null;
      try {
        return await work(purgesOn(runner));
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1)`, [LOCK]);
      }
    } finally {
      await runner.release();
    }
  }
}

function purgesOn(runner: QueryRunner): DeliveryLogPurge {
  const count = async (sql: string, cutoff: Date) => Number((await runner.query(sql, [cutoff]))[0].n);
  return {
    deliveries: (cutoff) =>
      count(
        `WITH gone AS (DELETE FROM webhook_deliveries WHERE status <> 'pending' AND COALESCE(replayed_at, created_at) < $1 RETURNING 1) SELECT count(*) AS n FROM gone`,
        cutoff,
      ),
    // An event is kept while a delivery of it is still pending, or a consumer's cursor has not passed it or
    // still waits for its transaction (one that was running when the cursor moved past it, `pending`).
    events: (cutoff) =>
      count(
        `WITH gone AS (DELETE FROM outbox_events o WHERE o.dispatched_at IS NOT NULL AND o.created_at < $1
               AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = o.id AND d.status = 'pending')
               AND NOT EXISTS (SELECT 1 FROM outbox_cursors c WHERE c.instance_id = o.instance_id AND ((o.tx, o.id) > (c.tx, c.id) OR o.tx = ANY(c.pending)) AND o.id > c.floor) RETURNING 1)
             SELECT count(*) AS n FROM gone`,
        cutoff,
      ),
    errors: (cutoff) => count(`WITH gone AS (DELETE FROM webhook_errors WHERE created < $1 RETURNING 1) SELECT count(*) AS n FROM gone`, cutoff),
    audit: (cutoff) => count(`WITH gone AS (DELETE FROM audit_log WHERE at < $1 RETURNING 1) SELECT count(*) AS n FROM gone`, cutoff),
    // The literal type matches the partial index auth_keys_plaintexts_written_at.
    plaintexts: (cutoff) =>
      count(`WITH gone AS (DELETE FROM auth_keys WHERE type = 'received-plaintext' AND written_at < $1 RETURNING 1) SELECT count(*) AS n FROM gone`, cutoff),
  };
}
