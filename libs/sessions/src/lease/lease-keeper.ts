import type { Lease, LeaseRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';

export interface LeaseKeeperOptions {
  workerId: string;
  /** Most sessions this worker holds at once (WORKER_CAPACITY). */
  capacity: number;
  /** Lease lifetime; renewed every ttl/3 (LEASE_TTL_MS). */
  ttlMs: number;
  /** How often to look for orphaned instances to adopt. */
  reconcileIntervalMs: number;
}

/** What the keeper tells the owner of the sessions. */
export interface LeaseListener {
  /** The lease is gone (expired, taken over, or no longer provable): stop the session, write nothing. */
  leaseLost(instanceId: string): void;
  /** An orphaned paired instance was claimed for this worker: start its session from stored auth. */
  orphanClaimed(lease: Lease): Promise<void>;
}

export type ClaimResult = { kind: 'claimed'; lease: Lease } | { kind: 'full' } | { kind: 'held-elsewhere' };

/**
 * Owns this worker's leases: registration, renewal, adoption of orphans, and release.
 *
 * Fencing in short: every write made for an instance proves `(worker, fencing token)` against the
 * lease row inside its own transaction (see LeaseRepository), so a worker that lost a lease can never
 * commit again. What the database cannot stop is a stale worker's *socket*: two sockets for one
 * device make WhatsApp replace one of them (440). So the keeper also stops sessions on its own:
 *
 * - a renewal that does not return a lease (or returns another token) means it is lost → stop now;
 * - when renewals fail or hang (database unreachable), the worker cannot prove anything. A lease
 *   expires `ttl` after the last successful renewal *started* (the database set `now() + ttl` after
 *   that moment), so a deadline timer stops every session a safety margin before that point, before
 *   another worker can claim the lease. Each successful renewal pushes the deadline on.
 */
export class LeaseKeeper {
  private readonly held = new Map<string, Lease>();
  /** Claims in flight, so capacity holds while they run and a second claim of one instance joins the first. */
  private readonly pending = new Map<string, Promise<ClaimResult>>();
  private listener: LeaseListener | null = null;
  private renewTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private reconcileTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | null = null;
  private reconciling: Promise<void> | null = null;
  /** Local time at which the last successful renewal started: every held lease lives at least until this + ttl. */
  private confirmedAt = 0;
  private running = false;

  constructor(
    private readonly leases: LeaseRepository,
    private readonly options: LeaseKeeperOptions,
    private readonly logger: Logger,
  ) {}

  get workerId(): string {
    return this.options.workerId;
  }

  get heldCount(): number {
    return this.held.size;
  }

  heldIds(): string[] {
    return [...this.held.keys()];
  }

  holds(instanceId: string): Lease | undefined {
    return this.held.get(instanceId);
  }

  private get renewIntervalMs(): number {
    return Math.max(50, Math.floor(this.options.ttlMs / 3));
  }

  /** Sessions stop this long before the leases could expire (clock rates differ, timers run late). */
  private get safetyMarginMs(): number {
    return Math.min(1000, Math.floor(this.options.ttlMs / 4));
  }

  /** Registers the worker and starts renewing and reconciling. */
  async start(listener: LeaseListener): Promise<void> {
    this.listener = listener;
    await this.leases.heartbeatWorker(this.options.workerId, this.options.capacity);
    this.running = true;
    this.confirmed(Date.now());
    this.renewTimer = setInterval(() => this.tickRenew(), this.renewIntervalMs);
    // The first reconcile waits one interval, so that workers starting together all count in fairShare().
    this.reconcileTimer = setInterval(() => this.tickReconcile(), this.options.reconcileIntervalMs);
  }

  /**
   * Takes the lease for one instance (a placement request). Refuses when this worker is full or when
   * another worker holds a live lease.
   */
  async claim(instanceId: string): Promise<ClaimResult> {
    const own = this.held.get(instanceId);
    if (own) return { kind: 'claimed', lease: own };
    const inFlight = this.pending.get(instanceId);
    if (inFlight) return inFlight;
    if (this.held.size + this.pending.size >= this.options.capacity) return { kind: 'full' };
    const claiming = this.leases.claim(instanceId, this.options.workerId, this.options.ttlMs).then((lease): ClaimResult => {
      if (!lease) return { kind: 'held-elsewhere' };
      this.held.set(instanceId, lease);
      return { kind: 'claimed', lease };
    });
    this.pending.set(instanceId, claiming);
    try {
      return await claiming;
    } finally {
      this.pending.delete(instanceId);
    }
  }

  /** Gives a lease back (session ended on purpose). Only deletes the row if it still carries our token. */
  async release(lease: Lease): Promise<void> {
    if (this.held.get(lease.instanceId)?.fencingToken === lease.fencingToken) this.held.delete(lease.instanceId);
    await this.leases.release(lease);
  }

  /** Drops a lease from the books without touching the database (it was lost or fenced out). */
  forget(instanceId: string): void {
    this.held.delete(instanceId);
  }

  /** Stops renewing and reconciling; waits for a tick in flight. Leases are released by the caller. */
  async stopTimers(): Promise<void> {
    this.running = false;
    clearInterval(this.renewTimer);
    clearInterval(this.reconcileTimer);
    clearTimeout(this.deadlineTimer);
    await Promise.allSettled([this.renewing, this.reconciling]);
  }

  /** Graceful end: releases whatever is still held and removes the worker row. */
  async shutdown(): Promise<void> {
    await this.stopTimers();
    await Promise.allSettled([...this.held.values()].map((lease) => this.release(lease)));
    await this.leases.removeWorker(this.options.workerId).catch((error: unknown) => this.logger.warn({ err: error }, 'removing worker row failed'));
  }

  /** Test aid that behaves like `kill -9`: timers stop, nothing is released, nothing is written. */
  halt(): void {
    this.running = false;
    clearInterval(this.renewTimer);
    clearInterval(this.reconcileTimer);
    clearTimeout(this.deadlineTimer);
    this.held.clear();
  }

  /** One renewal round now (tests; the timer calls the same). */
  renewNow(): Promise<void> {
    this.renewing ??= this.renew().finally(() => (this.renewing = null));
    return this.renewing;
  }

  /** One reconcile round now (tests; the timer calls the same). */
  reconcileNow(): Promise<void> {
    this.reconciling ??= this.reconcile().finally(() => (this.reconciling = null));
    return this.reconciling;
  }

  private tickRenew(): void {
    if (this.running) void this.renewNow();
  }

  /** Every held lease lives at least until `startedAt + ttl`; arm the cut-off just before that. */
  private confirmed(startedAt: number): void {
    this.confirmedAt = startedAt;
    clearTimeout(this.deadlineTimer);
    const delay = Math.max(0, startedAt + this.options.ttlMs - this.safetyMarginMs - Date.now());
    this.deadlineTimer = setTimeout(() => this.deadlinePassed(), delay);
  }

  private deadlinePassed(): void {
    if (!this.running || this.held.size === 0) return;
    // A hung or unreachable database must not keep sockets alive that another worker may take over.
    this.logger.error({ held: this.held.size, sinceConfirmedMs: Date.now() - this.confirmedAt }, 'leases can no longer be proven; stopping every session');
    for (const instanceId of [...this.held.keys()]) this.lose(instanceId);
  }

  private tickReconcile(): void {
    if (this.running) void this.reconcileNow();
  }

  private async renew(): Promise<void> {
    const startedAt = Date.now();
    // Only leases held before the query can be judged by its result; later claims are not in it.
    const before = new Map(this.held);
    try {
      await this.leases.heartbeatWorker(this.options.workerId, this.options.capacity);
      const renewed = await this.leases.renewAll(this.options.workerId, this.options.ttlMs);
      if (this.running) this.confirmed(startedAt);
      for (const [instanceId, lease] of before) {
        if (this.held.get(instanceId) !== lease) continue;
        // Missing: expired and maybe claimed elsewhere. Another token: it lapsed and was re-claimed,
        // so this session's writes are already fenced. Either way, stop without writing.
        if (renewed.get(instanceId) !== lease.fencingToken) this.lose(instanceId);
      }
      for (const [instanceId, fencingToken] of renewed) {
        // A row of ours no session knows (e.g. a claim whose start failed and whose release failed):
        // renewing it forever would keep the instance from everyone, so give it back.
        if (!this.held.has(instanceId) && !this.pending.has(instanceId)) {
          await this.leases.release({ instanceId, workerId: this.options.workerId, fencingToken });
        }
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'lease renewal failed');
    }
  }

  private async reconcile(): Promise<void> {
    try {
      const { share } = await this.leases.fairShare(this.options.workerId, this.options.capacity, this.options.ttlMs);
      const target = Math.min(share, this.options.capacity);
      // Workers scanning together see the same orphans and only one wins each claim; the losers
      // look again (a few rounds at most) instead of waiting a whole interval.
      for (let round = 0; round < 3; round++) {
        const room = target - (this.held.size + this.pending.size);
        if (room <= 0 || !this.running) return;
        const candidates = await this.leases.findOrphans(room);
        let lostRaces = 0;
        for (const instanceId of candidates) {
          if (!this.running) return;
          const result = await this.claim(instanceId);
          if (result.kind === 'held-elsewhere') lostRaces += 1;
          if (result.kind === 'claimed') await this.adopt(result.lease);
        }
        if (lostRaces === 0) return;
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'reconcile failed');
    }
  }

  private async adopt(lease: Lease): Promise<void> {
    this.logger.info({ instanceId: lease.instanceId }, 'adopting orphaned instance');
    try {
      await this.listener?.orphanClaimed(lease);
    } catch (error) {
      this.logger.error({ err: error, instanceId: lease.instanceId }, 'starting an adopted session failed; releasing it');
      if (this.held.get(lease.instanceId) === lease) await this.release(lease).catch(() => undefined);
    }
  }

  private lose(instanceId: string): void {
    if (!this.held.delete(instanceId)) return;
    this.logger.warn({ instanceId }, 'lease lost; closing the session without writing');
    try {
      this.listener?.leaseLost(instanceId);
    } catch (error) {
      this.logger.error({ err: error, instanceId }, 'stopping a session after a lost lease failed');
    }
  }
}
