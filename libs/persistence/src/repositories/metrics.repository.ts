import { RepositoryBase } from './repository-base';

/** The pg Pool counters TypeORM's Postgres driver keeps as `master`. */
interface PoolCounters {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/**
 * What a Prometheus scrape reads from Postgres: a few aggregates, one statement each, run once per
 * scrape (every 15–30 s), never on a request path.
 */
export class MetricsRepository extends RepositoryBase {
  /** Instances by status (`connected`, `connecting`, `disconnected`); a sequential count of the table. */
  async instancesByStatus(): Promise<Array<{ status: string; count: number }>> {
    const rows: Array<{ status: string; count: number }> = await this.db.query(`SELECT status, count(*)::int AS count FROM instances GROUP BY status`);
    return rows;
  }

  /**
   * Queued async sends by state, with the age of the oldest of each: `in_flight` (handed to a worker
   * under the lane's current claim), `waiting` (the lane waits for a retry or a reset) and `queued`
   * (everything else). Reads the whole send_queue: cheap at the depths it holds (it drains at the
   * instances' pace; 100,000 rows read in tens of ms), and only once per scrape.
   */
  async asyncQueueByState(): Promise<Array<{ state: string; depth: number; oldestSeconds: number }>> {
    const rows: Array<{ state: string; depth: number; oldest_seconds: number }> = await this.db.query(`
      SELECT CASE
               WHEN l.in_flight_id = q.id THEN 'in_flight'
               WHEN l.retry_at > now() OR l.resetting_until > now() THEN 'waiting'
               ELSE 'queued'
             END AS state,
             count(*)::int AS depth,
             EXTRACT(EPOCH FROM now() - min(q.created_at))::float8 AS oldest_seconds
        FROM send_queue q
        LEFT JOIN send_lanes l ON l.instance_id = q.instance_id
       GROUP BY 1`);
    return rows.map((row) => ({ state: row.state, depth: row.depth, oldestSeconds: Math.max(0, row.oldest_seconds) }));
  }

  /** Pending webhook deliveries and the age of the oldest (the partial index on pending rows serves it). */
  async webhookBacklog(): Promise<{ pending: number; oldestSeconds: number }> {
    const [row]: Array<{ pending: number; oldest_seconds: number | null }> = await this.db.query(
      `SELECT count(*)::int AS pending, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS oldest_seconds
         FROM webhook_deliveries WHERE status = 'pending'`,
    );
    return { pending: row.pending, oldestSeconds: Math.max(0, row.oldest_seconds ?? 0) };
  }

  /** Instances whose live lease one session worker holds (the leases table has a row per instance: a short scan, once per scrape). */
  async instancesHeldBy(workerId: string): Promise<number> {
    const [row]: Array<{ held: number }> = await this.db.query(`SELECT count(*)::int AS held FROM session_leases WHERE worker_id = $1 AND expires_at > now()`, [
      workerId,
    ]);
    return row.held;
  }

  /** This process's connection pool: connections open, idle, and queries waiting for one (no statement). */
  databasePool(): { total: number; idle: number; waiting: number } {
    const pool = (this.dataSource.driver as unknown as { master?: PoolCounters }).master;
    return { total: pool?.totalCount ?? 0, idle: pool?.idleCount ?? 0, waiting: pool?.waitingCount ?? 0 };
  }
}
