import type { EntityManager, QueryRunner } from 'typeorm';
import { FencedOutError } from './fenced-out.error';
import { pipelinedTransaction, type TailStatement } from '../pipelined-transaction';
import { dataSourceOf, type Database } from '../tx';
import { RepositoryBase } from './repository-base';
import { fenceManyParams } from './lease-fence';

/** The instances whose lease the proof's SELECT found (and locked). */
function heldIn(rows: unknown[]): Set<string> {
  return new Set((rows as Array<{ instance_id: string }>).map((row) => row.instance_id));
}

/** A group's proof found a lease gone after its work ran optimistically: the group runs again (fencedGroupTransaction). */
class LeaseLostInGroup extends Error {}

export interface Lease {
  instanceId: string;
  workerId: string;
  fencingToken: string;
}

/**
 * Session leases: at most one worker holds an instance at a time.
 *
 * Invariants:
 * - A lease row is held by `worker_id` while `expires_at > now()`. The holder renews it by heartbeat.
 * - A lapsed row only becomes *takeable*: it is lost when taken, not when it lapses (ADR 0037). A claim
 *   by anyone else changes `worker_id` and bumps the token, a re-claim of our own lapsed row bumps the
 *   token, a hand-over renames `worker_id`, a release deletes the row. So the fence proves
 *   `(worker, token)` alone, and a holder whose row lapsed while the database was gone (a failover)
 *   writes on as soon as it answers again, if nobody took the row meanwhile.
 * - `fencing_token` increases every time the holder changes (or the same worker re-acquires an expired
 *   lease). Writes on behalf of an instance (auth state, status) check the token inside their own
 *   transaction with `FOR KEY SHARE`, so once another worker has claimed the row, a stale holder can
 *   never commit again: its check either sees the new token, or holds the row lock and makes the claim
 *   wait until the stale write committed (it was still the holder then). The claim waits because it
 *   changes `fencing_token`, a key column (unique index `session_leases_fencing_key`, migration
 *   1763910000000); the holder's renewal changes only `expires_at` and does not wait for its own
 *   fenced writes (as it did behind `FOR SHARE`).
 * - A crash leaves the row in place; it simply expires and the next claim takes it over.
 */
/**
 * The claims' conflict clause (claim, claimMany): an existing row is taken when it lapsed (another worker's only
 * with `$4`, takeLapsed, or when handed over) or is already ours. A change of holder (or a lapse) bumps the token;
 * our own live lease keeps it.
 */
const TAKE_ROW_UNLESS_HELD = `ON CONFLICT (instance_id) DO UPDATE
         SET worker_id = EXCLUDED.worker_id,
             fencing_token = CASE WHEN session_leases.worker_id = EXCLUDED.worker_id AND session_leases.expires_at > now()
                                  THEN session_leases.fencing_token ELSE session_leases.fencing_token + 1 END,
             expires_at = EXCLUDED.expires_at
         WHERE (session_leases.expires_at <= now() AND ($4::boolean OR session_leases.worker_id LIKE 'handed-over:%'))
            OR session_leases.worker_id = EXCLUDED.worker_id`;

export class LeaseRepository extends RepositoryBase {
  /** The connection renewOwn() keeps for itself (see there). */
  private renewalRunner: QueryRunner | null = null;
  private renewalConnecting: Promise<QueryRunner> | null = null;

  /**
   * Takes the lease if it is free or expired (or already ours). Returns it, or null when another worker holds it.
   * `takeLapsed: false` (a keeper just back from an outage of its own, ADR 0037) leaves another worker's
   * lapsed row alone: only a free row or one of ours is taken.
   */
  async claim(instanceId: string, workerId: string, ttlMs: number, options: { takeLapsed?: boolean } = {}): Promise<Lease | null> {
    const takeLapsed = options.takeLapsed ?? true;
    try {
      return await this.claimOnce(instanceId, workerId, ttlMs, takeLapsed);
    } catch (error) {
      // Two first claims of an instance at once: both insert, ON CONFLICT (instance_id) settles only its
      // own index, and the loser can fail on (instance_id, fencing_token) instead. The row exists now;
      // claiming again takes the ON CONFLICT path (null: the other worker holds it).
      if ((error as { code?: string; constraint?: string }).constraint !== 'session_leases_fencing_key') throw error;
      return this.claimOnce(instanceId, workerId, ttlMs, takeLapsed);
    }
  }

  private async claimOnce(instanceId: string, workerId: string, ttlMs: number, takeLapsed: boolean): Promise<Lease | null> {
    const rows: Array<{ fencing_token: string }> = await this.db.query(
      `INSERT INTO session_leases (instance_id, worker_id, fencing_token, expires_at)
       VALUES ($1, $2, 1, now() + ($3 || ' milliseconds')::interval)
       ${TAKE_ROW_UNLESS_HELD}
       RETURNING fencing_token`,
      [instanceId, workerId, String(ttlMs), takeLapsed],
    );
    return rows.length ? { instanceId, workerId, fencingToken: String(rows[0].fencing_token) } : null;
  }

  /**
   * claim() for many instances in one statement (a reconcile's orphans, issue #38: a round trip each made a
   * worker that adopts hundreds claim them for seconds). Returns the leases taken, by instance; an instance
   * another worker holds, or one deleted meanwhile, is not among them. The rows are written in the ids'
   * order, so two workers claiming overlapping sets lock them in the same order (no deadlock); a statement
   * that lost the race of two first claims, or met an instance deleted under it, is run once more.
   */
  async claimMany(instanceIds: string[], workerId: string, ttlMs: number, options: { takeLapsed?: boolean } = {}): Promise<Map<string, Lease>> {
    const ids = [...new Set(instanceIds)].sort();
    if (ids.length === 0) return new Map();
    const takeLapsed = options.takeLapsed ?? true;
    try {
      return await this.claimManyOnce(ids, workerId, ttlMs, takeLapsed);
    } catch (error) {
      const { code, constraint } = error as { code?: string; constraint?: string };
      // As in claim(): the loser of two first claims; or an instance deleted between the join and its key check.
      if (constraint !== 'session_leases_fencing_key' && code !== '23503' && code !== '40P01') throw error;
      return this.claimManyOnce(ids, workerId, ttlMs, takeLapsed);
    }
  }

  private async claimManyOnce(ids: string[], workerId: string, ttlMs: number, takeLapsed: boolean): Promise<Map<string, Lease>> {
    const rows: Array<{ instance_id: string; fencing_token: string }> = await this.db.query(
      `INSERT INTO session_leases (instance_id, worker_id, fencing_token, expires_at)
       SELECT u.id, $2, 1, now() + ($3 || ' milliseconds')::interval
       FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n) JOIN instances i ON i.id = u.id
       ORDER BY u.n
       ${TAKE_ROW_UNLESS_HELD}
       RETURNING instance_id, fencing_token`,
      [ids, workerId, String(ttlMs), takeLapsed],
    );
    return new Map(rows.map((row) => [row.instance_id, { instanceId: row.instance_id, workerId, fencingToken: String(row.fencing_token) }]));
  }

  /** Extends every live lease this worker holds; returns the ids it still holds (anything missing was lost). */
  async renewAll(workerId: string, ttlMs: number): Promise<Map<string, string>> {
    const rows: Array<{ instance_id: string; fencing_token: string }> = await this.db.query(
      // (wrapped in a CTE: TypeORM returns [rows, count] for a bare UPDATE … RETURNING)
      `WITH renewed AS (
         UPDATE session_leases SET expires_at = now() + ($2 || ' milliseconds')::interval
         WHERE worker_id = $1 AND expires_at > now()
         RETURNING instance_id, fencing_token)
       SELECT * FROM renewed`,
      [workerId, String(ttlMs)],
    );
    return new Map(rows.map((row) => [row.instance_id, String(row.fencing_token)]));
  }

  /**
   * The worker's heartbeat and the renewal of every lease row it holds, in ONE statement on a
   * connection of its own (issue #34): under a reconnect storm every pool connection is busy with
   * handshakes' key and state writes, and a renewal queued behind them came too late, so the worker
   * gave up its own leases. The connection is taken from the pool once and kept; a failed or timed-out
   * statement (`statement_timeout` = `timeoutMs`) drops it and the next renewal takes a new one.
   *
   * Rows of this worker that lapsed are renewed too (same token): a row still naming this worker was
   * claimed by nobody else since (a claim by another worker changes `worker_id`, one of ours bumps the
   * token), so no other holder can have written meanwhile and fencing stays intact. Returns every row
   * renewed, instance → token; the caller tells its sessions' tokens apart from rows no session knows.
   *
   * `heartbeat: false` (a draining worker, issue #39) renews the leases without the heartbeat: the worker
   * row it removed stays removed, so that the others' fair share keeps counting it out while it hands its
   * instances over one by one.
   */
  async renewOwn(workerId: string, capacity: number, ttlMs: number, timeoutMs = ttlMs, options: { heartbeat?: boolean } = {}): Promise<Map<string, string>> {
    // `statement_timeout` is the server's: a connection whose server vanished without a reset (a
    // failover, a partition) answers nothing, not even the connect's SET, and the renewal would wait
    // for it for good while the leases lapse (issue #39). The client gives up a little after the server
    // would have, and the next renewal takes a new connection.
    // No connection at all by then is an unreachable database (a connect nobody answers, ADR 0037's
    // outage); a statement unanswered on an open connection may be a database that is only slow.
    let timer: NodeJS.Timeout | undefined;
    let runner: QueryRunner | null = null;
    const unanswered = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            runner
              ? new Error(`lease renewal not answered within ${timeoutMs} ms`)
              : Object.assign(new Error(`connect ETIMEDOUT: no database connection for the lease renewal within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }),
          ),
        Math.max(100, Math.floor(timeoutMs)) + 500,
      );
    });
    try {
      runner = await Promise.race([this.renewalConnection(timeoutMs), unanswered]);
      const rows: Array<{ instance_id: string; fencing_token: string }> = await Promise.race([
        runner.query(
          `WITH worker AS (
           INSERT INTO session_workers (id, capacity, heartbeat_at) SELECT $1, $3, now() WHERE $4::boolean
           ON CONFLICT (id) DO UPDATE SET capacity = EXCLUDED.capacity, heartbeat_at = now()),
         renewed AS (
           UPDATE session_leases SET expires_at = now() + ($2 || ' milliseconds')::interval
           WHERE worker_id = $1
           RETURNING instance_id, fencing_token)
         SELECT * FROM renewed`,
          [workerId, String(ttlMs), capacity, options.heartbeat ?? true],
        ),
        unanswered,
      ]);
      return new Map(rows.map((row) => [row.instance_id, String(row.fencing_token)]));
    } catch (error) {
      if (runner) {
        if (this.renewalRunner === runner) this.renewalRunner = null;
        dropConnection(runner, error);
      } else {
        // A connect still under way is given back when it ends (renewalConnection); the next renewal starts its own.
        this.renewalConnecting = null;
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Whether a renewal is waiting for a connection to the database right now (none open, a connect under
   * way): a renewal still in flight at the keeper's cut-off for this reason is an outage (ADR 0037), not a
   * slow statement.
   */
  get renewalAwaitsConnection(): boolean {
    return this.renewalConnecting !== null;
  }

  /** Gives back the renewal connection (worker shutdown). */
  async closeRenewal(): Promise<void> {
    const runner = this.renewalRunner;
    this.renewalRunner = null;
    await runner?.release().catch(() => undefined);
  }

  private renewalConnection(timeoutMs: number): Promise<QueryRunner> {
    if (this.renewalRunner && !this.renewalRunner.isReleased) return Promise.resolve(this.renewalRunner);
    if (this.renewalConnecting) return this.renewalConnecting;
    // This connect's token: a renewal that gave up on it replaced renewalConnecting (or cleared it).
    const token: { promise?: Promise<QueryRunner> } = {};
    const connecting = (async () => {
      const runner = this.dataSource.createQueryRunner();
      try {
        await runner.connect();
        await runner.query(`SET statement_timeout = ${Math.max(100, Math.floor(timeoutMs))}`);
      } catch (error) {
        dropConnection(runner, error);
        throw error;
      }
      // Given up on while it connected (renewOwn's timeout): not kept, another connect took its place.
      if (this.renewalConnecting !== token.promise) {
        await runner.release().catch(() => undefined);
        throw new Error('renewal connection opened too late');
      }
      this.renewalRunner = runner;
      return runner;
    })().finally(() => {
      if (this.renewalConnecting === token.promise) this.renewalConnecting = null;
    });
    token.promise = connecting;
    this.renewalConnecting = connecting;
    return connecting;
  }

  /**
   * Takes back rows of this worker that no session of it uses any more (its sessions were stopped
   * because the worker could not prove its leases in time, or a fenced write found a row lapsed), for
   * instances that still want a session, at most `limit` of them, oldest instances first: each gets a
   * new fencing token, so writes of the stopped sessions can no longer commit (the token is a key:
   * the bump waits for those in flight). One statement.
   */
  async retakeOwn(workerId: string, instanceIds: string[], ttlMs: number, limit: number): Promise<Lease[]> {
    if (instanceIds.length === 0 || limit <= 0) return [];
    const rows: Array<{ instance_id: string; fencing_token: string }> = await this.db.query(
      `WITH wanted AS (
         SELECT i.id FROM instances i
         WHERE i.id = ANY($2::text[]) AND i.desired_state = 'connected' AND i.paired
         ORDER BY i.created LIMIT $4),
       retaken AS (
         UPDATE session_leases SET fencing_token = fencing_token + 1, expires_at = now() + ($3 || ' milliseconds')::interval
         WHERE worker_id = $1 AND instance_id IN (SELECT id FROM wanted)
         RETURNING instance_id, fencing_token)
       SELECT * FROM retaken`,
      [workerId, instanceIds, String(ttlMs), limit],
    );
    return rows.map((row) => ({ instanceId: row.instance_id, workerId, fencingToken: String(row.fencing_token) }));
  }

  /** Deletes rows of this worker (whatever their token) that no session of it uses: anyone may claim them. One statement. */
  async releaseOwn(workerId: string, instanceIds: string[]): Promise<void> {
    if (instanceIds.length === 0) return;
    await this.db.query(`DELETE FROM session_leases WHERE worker_id = $1 AND instance_id = ANY($2::text[])`, [workerId, instanceIds]);
  }

  /**
   * A draining worker's hand-over (issue #39): its leases end NOW but their rows stay, expired and no
   * longer naming the worker (`handed-over:<worker>`), so another worker may claim them at once (the
   * claim bumps the token: fencing as after a crash), the worker's own renewal leaves them alone, and
   * the gateway, which sees a row lapsed moments ago, keeps trying a send until the heir answers
   * (TakeoverRequester) instead of answering "No session". Only rows still carrying our token. One statement.
   */
  async handOver(leases: Lease[]): Promise<number> {
    if (leases.length === 0) return 0;
    const [ids, workers, tokens] = fenceManyParams(leases);
    const rows: unknown[] = await this.db.query(
      `WITH ended AS (
         UPDATE session_leases l SET expires_at = now(), worker_id = 'handed-over:' || l.worker_id
         FROM unnest($1::text[], $2::text[], $3::bigint[]) AS f(instance_id, worker_id, fencing_token)
         WHERE l.instance_id = f.instance_id AND l.worker_id = f.worker_id AND l.fencing_token = f.fencing_token
           AND l.expires_at > now()
         RETURNING l.instance_id)
       SELECT * FROM ended`,
      [ids, workers, tokens],
    );
    return rows.length;
  }

  /** Gives a lease up at once (graceful shutdown, logout), but only if it is still ours. */
  async release(lease: Lease): Promise<void> {
    await this.db.query(`DELETE FROM session_leases WHERE instance_id = $1 AND worker_id = $2 AND fencing_token = $3`, [
      lease.instanceId,
      lease.workerId,
      lease.fencingToken,
    ]);
  }

  async holderOf(instanceId: string): Promise<Lease | null> {
    const rows: Array<{ worker_id: string; fencing_token: string }> = await this.db.query(
      `SELECT worker_id, fencing_token FROM session_leases WHERE instance_id = $1 AND expires_at > now()`,
      [instanceId],
    );
    return rows.length ? { instanceId, workerId: rows[0].worker_id, fencingToken: String(rows[0].fencing_token) } : null;
  }

  /**
   * Whether a takeover of the instance is under way or due: a lease row that is live or lapsed less
   * than `withinMs` ago. A clean end deletes the row (release), so a row left behind means its holder
   * died, is reconnecting or drained (handOver: the row is expired at once and stays); a reconciling
   * worker claims it once it lapses. A row lapsed long ago
   * (every worker down) is not a takeover in flux.
   */
  async heldRecently(instanceId: string, withinMs: number): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `SELECT 1 FROM session_leases WHERE instance_id = $1 AND expires_at > now() - ($2 || ' milliseconds')::interval`,
      [instanceId, String(withinMs)],
    );
    return rows.length > 0;
  }

  /**
   * Inside a caller's transaction: proves the lease is still ours and pins it until commit.
   * Returns false when fenced out (the caller must roll back and stop the session).
   */
  async holds(lease: Lease): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `SELECT 1 FROM session_leases
       WHERE instance_id = $1 AND worker_id = $2 AND fencing_token = $3
       FOR KEY SHARE`,
      [lease.instanceId, lease.workerId, lease.fencingToken],
    );
    return rows.length > 0;
  }

  /**
   * A transaction that proves the lease (then `work` runs in it), throwing FencedOutError when it is
   * gone: nothing of `work` is committed then. `tail`, when given, builds the transaction's last
   * statement from the work's value (the outbox insert of its events).
   *
   * Pipelined (pipelinedTransaction, ADR 0023): the begin and the proof (one simple-query batch, the
   * lease values as escaped literals) go out with the work's first statement, so the server takes the
   * proof's FOR KEY SHARE lock before any of the work runs, and the tail with the COMMIT: two round
   * trips fewer than awaiting each. The proof's answer is read after the work.
   * A fenced-out worker's work thus runs and is rolled back; `work` must have no effect outside the
   * transaction before this returns (the inbound store's writes only write, and are safe to run again).
   */
  static async fencedTransaction<T>(
    database: Database,
    lease: Lease,
    work: (manager: EntityManager) => Promise<T>,
    tail?: (value: T) => TailStatement | null,
  ): Promise<T> {
    return pipelinedTransaction(
      dataSourceOf(database),
      LeaseRepository.proofOf([lease]),
      async (manager, proof) => {
        const value = await work(manager);
        if (!heldIn(await proof).has(lease.instanceId)) throw new FencedOutError(lease.instanceId);
        return value;
      },
      tail,
    );
  }

  /**
   * fencedTransaction() without the proof, for a write the fence refused because the lease moved
   * while the write was on its way, and that is idempotent by what it writes (a received message:
   * stored once by (instance, message id), its event written only by the transaction that inserted it,
   * ADR 0034). Its socket already told WhatsApp it has the message, so WhatsApp will not send it to the
   * new holder: dropping it would lose it. Nothing else may be written this way.
   */
  static async unfencedTransaction<T>(database: Database, work: (manager: EntityManager) => Promise<T>, tail?: (value: T) => TailStatement | null): Promise<T> {
    return pipelinedTransaction(
      dataSourceOf(database),
      () => 'START TRANSACTION',
      (manager) => work(manager),
      tail,
    );
  }

  /**
   * fencedTransaction() for the writes of many instances in ONE transaction (the worker's group commit
   * of inbound writes, ADR 0012): the begin and the proof of every lease go to the server in one round
   * trip, each live lease row locked FOR KEY SHARE until commit. `work` learns which instances are
   * still held and must write only for those (a lease that is gone is that instance's FencedOutError,
   * not the group's). Leases are given as escaped literals, as in fencedTransaction().
   *
   * Pipelined as fencedTransaction() is: `work` starts before the proof's answer, told that every
   * instance is held (they nearly always are). When the proof then finds one gone, that transaction
   * is rolled back and the group runs again in a new one, `work` told the instances the proof found
   * (so `work` must be safe to run again).
   */
  static async fencedGroupTransaction<T>(
    database: Database,
    leases: Lease[],
    work: (manager: EntityManager, held: Set<string>) => Promise<T>,
    tail?: (value: T) => TailStatement | null,
  ): Promise<T> {
    const dataSource = dataSourceOf(database);
    const proofText = LeaseRepository.proofOf(leases);
    const all = new Set(leases.map((lease) => lease.instanceId));
    try {
      return await pipelinedTransaction(
        dataSource,
        proofText,
        async (manager, proof) => {
          const value = await work(manager, new Set(all));
          const held = heldIn(await proof);
          if ([...all].some((id) => !held.has(id))) throw new LeaseLostInGroup();
          return value;
        },
        tail,
      );
    } catch (error) {
      if (!(error instanceof LeaseLostInGroup)) throw error;
      // Rolled back: once more, the proof read before the work.
      return pipelinedTransaction(dataSource, proofText, async (manager, proof) => work(manager, heldIn(await proof)), tail);
    }
  }

  /**
   * The head of a fenced transaction: the begin and the proof of every lease, one simple-query batch
   * (the lease values as escaped literals), each live lease row locked FOR KEY SHARE until commit; its
   * rows name the instances still held.
   */
  private static proofOf(leases: Lease[]): (client: { escapeLiteral(value: string): string }) => string {
    for (const lease of leases) if (!/^\d+$/.test(lease.fencingToken)) throw new Error(`invalid fencing token ${lease.fencingToken}`);
    return (client) =>
      `START TRANSACTION; SELECT instance_id FROM session_leases
         WHERE (instance_id, worker_id, fencing_token) IN (${leases
           .map((lease) => `(${client.escapeLiteral(lease.instanceId)}, ${client.escapeLiteral(lease.workerId)}, ${lease.fencingToken}::bigint)`)
           .join(', ')})
         FOR KEY SHARE`;
  }

  // --- workers ------------------------------------------------------------------------------------

  async heartbeatWorker(workerId: string, capacity: number): Promise<void> {
    await this.db.query(
      `INSERT INTO session_workers (id, capacity, heartbeat_at) VALUES ($1, $2, now())
       ON CONFLICT (id) DO UPDATE SET capacity = EXCLUDED.capacity, heartbeat_at = now()`,
      [workerId, capacity],
    );
  }

  async removeWorker(workerId: string): Promise<void> {
    await this.db.query(`DELETE FROM session_workers WHERE id = $1`, [workerId]);
  }

  /**
   * How many sessions this worker should hold now: an even share of every instance that wants a
   * session among the live workers, never above its capacity. Also names the live workers (this one
   * included) with the live leases each holds (`heldBy`) and its capacity (`capacityBy`), among whom the
   * instances a drain or a rebalance hands over are shared by their room under the share (hand-overs.ts).
   */
  async fairShare(
    workerId: string,
    capacity: number,
    liveWithinMs: number,
  ): Promise<{
    share: number;
    held: number;
    wanted: number;
    workers: number;
    workerIds: string[];
    heldBy: Record<string, number>;
    capacityBy: Record<string, number>;
  }> {
    const [row]: Array<{
      wanted: string;
      worker_ids: string[] | null;
      held_by: Record<string, number> | null;
      capacity_by: Record<string, number> | null;
    }> = await this.db.query(
      `WITH live_workers AS (SELECT id, capacity FROM session_workers WHERE heartbeat_at > now() - ($2 || ' milliseconds')::interval OR id = $1)
       SELECT
         (SELECT count(*) FROM instances WHERE desired_state = 'connected') AS wanted,
         (SELECT array_agg(id ORDER BY id) FROM live_workers) AS worker_ids,
         (SELECT json_object_agg(id, capacity) FROM live_workers) AS capacity_by,
         (SELECT json_object_agg(worker_id, n) FROM (SELECT worker_id, count(*) AS n FROM session_leases WHERE expires_at > now() GROUP BY worker_id) AS live) AS held_by`,
      [workerId, String(liveWithinMs)],
    );
    const wanted = Number(row.wanted);
    const workerIds = row.worker_ids ?? [];
    const workers = Math.max(1, workerIds.length);
    const heldBy: Record<string, number> = {};
    const capacityBy: Record<string, number> = {};
    for (const id of workerIds) {
      heldBy[id] = Number(row.held_by?.[id] ?? 0);
      // This worker's own row may not be written yet (its first reconcile): its capacity is the one it was given.
      capacityBy[id] = id === workerId ? capacity : Number(row.capacity_by?.[id] ?? capacity);
    }
    const held = Number(row.held_by?.[workerId] ?? 0);
    return { share: Math.min(capacity, Math.ceil(wanted / workers)), held, wanted, workers, workerIds, heldBy, capacityBy };
  }

  /**
   * Paired instances that want a session and have no live lease, oldest first. `SKIP LOCKED` lets
   * several workers scan at once without handing the same instance to two of them; the claim itself
   * is still decided by `claim()`'s conditional upsert.
   */
  async findOrphans(limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT i.id FROM instances i
       LEFT JOIN session_leases l ON l.instance_id = i.id AND l.expires_at > now()
       WHERE i.desired_state = 'connected' AND i.paired AND l.instance_id IS NULL
       ORDER BY i.created
       LIMIT $1
       FOR UPDATE OF i SKIP LOCKED`,
      [limit],
    );
    return rows.map((row) => row.id);
  }
}

/**
 * Gives a connection back with the error, so that the pool drops it rather than reuse it. Not waited
 * for: ending a connection nobody answers on takes as long as the wait it ends.
 */
function dropConnection(runner: QueryRunner, error: unknown): void {
  void (async () => {
    await (runner as QueryRunner & { releasePostgresConnection?: (error: unknown) => Promise<void> }).releasePostgresConnection?.(error).catch(() => undefined);
    await runner.release().catch(() => undefined);
  })();
}
