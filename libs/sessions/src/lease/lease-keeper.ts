import { databaseUnavailable, type Lease, type LeaseRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';
import { AnnouncedHandOvers, drainHeirs, HandOverBatch, HeirPlan, heirsByRoom, intakeOf, surplusOf, type Heir } from './hand-overs';
import type { ClaimResult, HandOverListener, LeaseKeeperOptions, LeaseListener, SurplusListener } from './lease-keeper.types';
export type { ClaimResult, HandOverListener, LeaseKeeperOptions, LeaseListener, SurplusListener } from './lease-keeper.types';

/**
 * Orphans a reconcile claims in one statement and adopts together (their rows and credentials read in one
 * statement). Their sessions start at once; the HandshakeGate bounds the handshakes.
 */
const ADOPTION_BATCH = 64;
/** While the database cannot be reached, renewals are tried this often (at most), not once an interval. */
const UNREACHABLE_RETRY_MS = 1_000;

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
 *   another worker can claim the lease. Each successful renewal pushes the deadline on. A renewal
 *   still in flight at that point (timers and replies run late on a loaded event loop) is waited for
 *   until the leases really lapse.
 *
 * A database that cannot be reached at all (ADR 0037: a failover, connections cut or refused, not a hang)
 * holds every worker's leases with it: nobody can take one while it is gone, and a lapsed row is taken
 * only by a claim, which changes its token. So past the cut-off the sessions ride the outage out (up to
 * `outageRideMs`) instead of stopping, renewals are tried every second, and the first one that gets
 * through renews every row still ours (same token) and stops the sessions of the rest. A keeper that was
 * itself cut off takes no other worker's lapsed lease for a grace after the database is back (one renewal
 * interval): the others renew theirs first, instead of having their instances taken from under them.
 *
 * Under load (issue #34) the renewal must not be what fails: it is one statement (heartbeat and every
 * lease row of this worker) on a database connection of its own, never queued behind the pool. A row of
 * ours that no session uses any more (its session was stopped because the worker was late) is taken
 * back with a new token, when its instance still wants a session, and the session restarts.
 *
 * Drain (issue #39): `beginDrain()` takes the worker out of the fair share at once (its renewals no
 * longer write the heartbeat that would put it back), and every lease given back from then on is handed
 * over (expired in place, see LeaseRepository.handOver) in batches, each announced so that the other
 * workers' keepers claim the instances named now (`reconcileSoon()`, hand-overs.ts).
 *
 * Rebalance (ADR 0043): a reconcile that finds this worker over its fair share while another worker has
 * room (one that just started, or came back from a restart) tells the surplus listener, which moves
 * sessions away one at a time. A lease given back for such a move (`beginMove`) is handed over and
 * announced as a drain's is; `surplus()` says, before each move, whether one is still due.
 */
export class LeaseKeeper {
  private readonly held = new Map<string, Lease>();
  /** Claims in flight, so capacity holds while they run and a second claim of one instance joins the first. */
  private readonly pending = new Map<string, Promise<ClaimResult>>();
  private listener: LeaseListener | null = null;
  private renewTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  /** The next renewal while the database cannot be reached (sooner than the interval). */
  private unreachableRetryTimer: NodeJS.Timeout | undefined;
  /** The reconcile at the end of the grace after an outage. */
  private graceTimer: NodeJS.Timeout | undefined;
  /** Local time of the first renewal that met no database since the last one that got through. */
  private unreachableSince: number | null = null;
  /** Past the cut-off with the database unreachable: the sessions are kept, unproven, until it answers. */
  private ridingOut = false;
  /** Until then (after an outage of our own) no other worker's lapsed lease is taken. */
  private graceUntil = 0;
  private reconcileTimer: NodeJS.Timeout | undefined;
  private firstReconcileTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | null = null;
  private reconciling: Promise<void> | null = null;
  /** Who inherits what this worker hands over (ADR 0058): the drain's plan, or the rebalance's for its next move. */
  private drainPlan: HeirPlan | null = null;
  private movePlan: HeirPlan | null = null;
  /** A reconcile has run to its end at least once since start() (the first look for instances). */
  private lookedOnce = false;
  /** Local time at which the last successful renewal started: every held lease lives at least until this + ttl. */
  private confirmedAt = 0;
  private running = false;
  private draining = false;
  /** A reconcile was asked for while one ran: run another right after it. */
  private reconcileAgain = false;
  /** Instances another worker just handed over (its announcement): the next reconcile claims these first. */
  private readonly announced: AnnouncedHandOvers;
  /** Leases given back while draining: handed over together, one statement per event-loop turn, and announced. */
  private readonly handOvers: HandOverBatch;
  /** The last renewal came back with less than an interval to spare: the next one starts at once. */
  private renewAgain = false;
  private onHandOver: HandOverListener | null = null;
  private onSurplus: SurplusListener | null = null;
  /** Instances being moved to another worker (a rebalance): their lease, once given back, is handed over. */
  private readonly moving = new Set<string>();
  /** The event loop's delay, read when a renewal is slow or the deadline passes (issue #34). */
  private loopDelay: ELDHistogram | null = null;

  constructor(
    private readonly leases: LeaseRepository,
    private readonly options: LeaseKeeperOptions,
    private readonly logger: Logger,
  ) {
    this.announced = new AnnouncedHandOvers(options.workerId);
    this.handOvers = new HandOverBatch(leases, (instanceIds) => this.announce(instanceIds));
  }

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

  /** After an outage, how long the others get to renew their lapsed leases before this keeper takes any. */
  private get takeoverGraceMs(): number {
    return Math.max(this.renewIntervalMs, 3 * UNREACHABLE_RETRY_MS);
  }

  /** Whether the sessions are kept past the cut-off because the database cannot be reached (ADR 0037). */
  get ridingOutOutage(): boolean {
    return this.ridingOut;
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
    this.loopDelay = monitorEventLoopDelay({ resolution: 20 });
    this.loopDelay.enable();
    this.confirmed(Date.now());
    this.renewTimer = setInterval(() => this.tickRenew(), this.renewIntervalMs);
    // The first reconcile waits one interval, so that workers starting together all count in fairShare(), unless
    // told sooner (a worker that is the only one: issue #38, 2 s of every restart of the embedded default).
    this.reconcileTimer = setInterval(() => this.tickReconcile(), this.options.reconcileIntervalMs);
    const first = this.options.firstReconcileDelayMs ?? this.options.reconcileIntervalMs;
    if (first < this.options.reconcileIntervalMs) this.firstReconcileTimer = setTimeout(() => this.tickReconcile(), first);
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
    // Just after an outage of our own, a lapsed lease of another worker is most likely one it is about
    // to renew: leave it (the caller hears "held elsewhere", as while it is live).
    const takeLapsed = this.unreachableSince === null && Date.now() >= this.graceUntil;
    const claiming = this.leases.claim(instanceId, this.options.workerId, this.options.ttlMs, { takeLapsed }).then((lease): ClaimResult => {
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

  /**
   * Gives a lease back (session ended on purpose). Only deletes the row if it still carries our token;
   * while draining the row is handed over instead (the instance moves to another worker).
   */
  async release(lease: Lease): Promise<void> {
    if (this.held.get(lease.instanceId)?.fencingToken === lease.fencingToken) this.held.delete(lease.instanceId);
    if (this.draining || this.moving.delete(lease.instanceId)) return this.handOvers.add(lease);
    await this.leases.release(lease);
  }

  /** Told when a reconcile finds this worker holding more than its share while another has room (ADR 0043). */
  setSurplusListener(listener: SurplusListener): void {
    this.onSurplus = listener;
  }

  /**
   * How many instances this worker should hand to the others now (a rebalance, ADR 0043; hand-overs.ts'
   * surplusOf): 0 while draining, stopped, in or just after a database outage of its own.
   */
  async surplus(): Promise<number> {
    if (!this.running || this.draining || this.unreachableSince !== null || Date.now() < this.graceUntil) return 0;
    const { target, heirs } = await this.standing();
    // The next move goes to the worker with the most room (named in its notice, ADR 0058).
    this.movePlan = new HeirPlan(heirs.filter((heir) => heir.workerId !== this.options.workerId));
    return surplusOf(this.options.workerId, this.held.size, target, heirs);
  }

  /**
   * Whether this worker has looked for its instances (its first reconcile ran to its end) and is not looking now:
   * a claim and its adoption run inside a reconcile (the readiness of a worker that just started, ADR 0057).
   */
  get looked(): boolean {
    return this.lookedOnce && this.reconciling === null;
  }

  /**
   * How many instances may still come to this one (hand-overs.ts' intakeOf): what the others hold over the fair
   * share, and what nobody live holds (an instance between its hand-over and its heir's claim is one), within this
   * worker's room under its share; without the rebalance (`rebalance` false) only what nobody holds. 0 while
   * draining or stopped.
   */
  async owed(rebalance = true): Promise<number> {
    if (!this.running || this.draining) return 0;
    const { share, heldBy, capacityBy, wanted } = await this.fairShare();
    return intakeOf(this.options.workerId, share, heldBy, capacityBy, wanted, rebalance);
  }

  /** LeaseRepository.fairShare as this worker reads it. */
  private fairShare(): ReturnType<LeaseRepository['fairShare']> {
    return this.leases.fairShare(this.options.workerId, this.options.capacity, this.options.ttlMs);
  }

  /** This worker's fair share (`target`, within its capacity) and the live workers as heirs by their room under theirs. */
  private async standing(): Promise<{ target: number; heirs: Heir[] }> {
    const { share, heldBy, capacityBy } = await this.fairShare();
    return { target: Math.min(share, this.options.capacity), heirs: heirsByRoom(share, heldBy, capacityBy) };
  }

  /**
   * One instance is about to move to another worker (a rebalance): once its session gives the lease back, the
   * lease is handed over and announced, not deleted. False when the lease is not held here (or the worker drains).
   */
  beginMove(instanceId: string): boolean {
    if (!this.running || this.draining || !this.held.has(instanceId)) return false;
    this.moving.add(instanceId);
    return true;
  }

  /** The move is over (done, or given up: a session that still runs keeps its lease as before). */
  endMove(instanceId: string): void {
    this.moving.delete(instanceId);
  }

  /** Told of every batch of instances handed over while draining. */
  setHandOverListener(listener: HandOverListener): void {
    this.onHandOver = listener;
  }

  /**
   * Drain begins (SIGTERM): no more adoption, this worker no longer counts in the others' fair share,
   * and from now on every lease given back is handed over at once.
   */
  async beginDrain(): Promise<void> {
    this.draining = true;
    clearInterval(this.reconcileTimer);
    await this.reconciling?.catch(() => undefined);
    // A renewal already under way started before the drain and writes the heartbeat: it must land first, or
    // it puts the worker row back after its removal, the heirs' fair share still counts this worker and an
    // heir leaves an instance handed over unadopted until the next hand-over (seen in worker-drain.e2e).
    await this.renewing?.catch(() => undefined);
    await this.leases.removeWorker(this.options.workerId).catch((error: unknown) => this.logger.warn({ err: error }, 'removing worker row failed'));
    // The heirs, by their room under the share of the workers left: named in each notice (ADR 0058). Without it
    // (the read failed), the heirs choose by rendezvous hashing as before.
    this.drainPlan = await this.fairShare()
      .then((standing) => new HeirPlan(drainHeirs(this.options.workerId, standing)))
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'reading the heirs of the drain failed; they choose for themselves');
        return null;
      });
  }

  /**
   * Another worker handed instances over: look for orphans now rather than at the next interval, and
   * claim the ones it named first, without scanning for them (`findOrphans` returns every heir the same
   * oldest rows, so the heirs raced for each claim; bench/cluster: 150–550 ms from a hand-over to its claim).
   */
  reconcileSoon(handedOver: readonly string[] = [], heirs: Readonly<Record<string, string>> = {}): void {
    if (!this.running || this.draining) return;
    this.announced.add(handedOver, heirs);
    if (this.reconciling) this.reconcileAgain = true;
    else void this.reconcileNow();
  }

  private notifySurplus(): void {
    try {
      this.onSurplus?.();
    } catch (error) {
      this.logger.warn({ err: error }, 'starting a rebalance failed');
    }
  }

  private announce(instanceIds: string[]): void {
    if (instanceIds.length === 0) return;
    const plan = this.draining ? this.drainPlan : this.movePlan;
    const heirs: Record<string, string> = {};
    for (const instanceId of instanceIds) {
      const heir = plan?.assign(instanceId);
      if (heir) heirs[instanceId] = heir;
    }
    try {
      this.onHandOver?.(instanceIds, heirs);
    } catch (error) {
      this.logger.warn({ err: error }, 'announcing handed-over leases failed');
    }
  }

  /** Drops a lease from the books without touching the database (it was lost or fenced out). */
  forget(instanceId: string): void {
    this.held.delete(instanceId);
  }

  /** Stops renewing and reconciling; waits for a tick in flight. Leases are released by the caller. */
  async stopTimers(): Promise<void> {
    this.running = false;
    this.clearTimers();
    await Promise.allSettled([this.renewing, this.reconciling]);
  }

  /**
   * Graceful end: hands over whatever is still held (in one statement, announced: another worker
   * adopts it now), removes the worker row and gives back the renewal connection.
   */
  async shutdown(): Promise<void> {
    await this.stopTimers();
    this.draining = true;
    const rest = [...this.held.values()];
    this.held.clear();
    await this.handOvers.settled();
    try {
      await this.leases.handOver(rest);
      this.announce(rest.map((lease) => lease.instanceId));
    } catch (error) {
      this.logger.warn({ err: error, leases: rest.length }, 'handing over the last leases failed; they lapse on their own');
    }
    await this.leases.removeWorker(this.options.workerId).catch((error: unknown) => this.logger.warn({ err: error }, 'removing worker row failed'));
    await this.leases.closeRenewal();
  }

  private clearTimers(): void {
    clearInterval(this.renewTimer);
    clearInterval(this.reconcileTimer);
    clearTimeout(this.firstReconcileTimer);
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.unreachableRetryTimer);
    clearTimeout(this.graceTimer);
    this.announced.stop();
    this.loopDelay?.disable();
  }

  /** Test aid that behaves like `kill -9`: timers stop, nothing is released, nothing is written. */
  halt(): void {
    this.running = false;
    this.clearTimers();
    this.held.clear();
    this.moving.clear();
    void this.leases.closeRenewal();
  }

  /** One renewal round now (tests; the timer calls the same). */
  renewNow(): Promise<void> {
    this.renewing ??= this.renew().finally(() => {
      this.renewing = null;
      if (this.renewAgain && this.running) {
        this.renewAgain = false;
        void this.renewNow();
      }
    });
    return this.renewing;
  }

  /** One reconcile round now (tests; the timer calls the same). */
  reconcileNow(): Promise<void> {
    this.reconciling ??= this.reconcile().finally(() => {
      this.reconciling = null;
      this.lookedOnce = true;
      // What another heir was given and left unclaimed is looked for once its head start ends.
      this.announced.afterHeadStarts(() => this.reconcileSoon());
      if (this.reconcileAgain && this.running && !this.draining) {
        this.reconcileAgain = false;
        void this.reconcileNow();
      }
    });
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
    // Timers and replies run late on a loaded event loop: a renewal in flight may well have been
    // answered already. Its answer decides, up to the moment the leases can really lapse.
    const lapseAt = this.confirmedAt + this.options.ttlMs;
    if (this.renewing && Date.now() < lapseAt) {
      this.deadlineTimer = setTimeout(() => this.deadlinePassed(), lapseAt - Date.now());
      return;
    }
    // The database cannot be reached at all (ADR 0037): it holds the others' leases as well as ours, and
    // a lapsed row of ours is taken only by a claim that changes its token. Ride it out, for a while.
    const rideUntil = lapseAt + (this.options.outageRideMs ?? 0);
    // A renewal still waiting for a connection at the lapse (a connect nobody answers) tells the same.
    if (this.renewing && this.leases.renewalAwaitsConnection) this.unreachableSince ??= Date.now();
    if (this.unreachableSince !== null && Date.now() < rideUntil) {
      if (!this.ridingOut) {
        this.ridingOut = true;
        this.logger.warn(
          { held: this.held.size, unreachableForMs: Date.now() - this.unreachableSince, rideForMs: rideUntil - Date.now() },
          'the database cannot be reached: sessions ride the outage out until it answers',
        );
      }
      this.deadlineTimer = setTimeout(() => this.deadlinePassed(), rideUntil - Date.now());
      return;
    }
    // A hung database, or an outage longer than the ride: sockets another worker may take over must go.
    this.ridingOut = false;
    this.logger.error(
      { held: this.held.size, sinceConfirmedMs: Date.now() - this.confirmedAt, unreachable: this.unreachableSince !== null, ...this.loopLag() },
      'leases can no longer be proven; stopping every session',
    );
    for (const instanceId of [...this.held.keys()]) this.lose(instanceId);
  }

  private tickReconcile(): void {
    if (this.running && !this.draining) void this.reconcileNow();
  }

  /** The event loop's delay since the last reading (p99, max), then reset. */
  private loopLag(): { loopDelayP99Ms?: number; loopDelayMaxMs?: number } {
    const histogram = this.loopDelay;
    if (!histogram || histogram.count === 0) return {};
    const lag = { loopDelayP99Ms: Math.round(histogram.percentile(99) / 1e6), loopDelayMaxMs: Math.round(histogram.max / 1e6) };
    histogram.reset();
    return lag;
  }

  private async renew(): Promise<void> {
    const startedAt = Date.now();
    // Only leases held before the query can be judged by its result; later claims are not in it.
    const before = new Map(this.held);
    try {
      // Draining: the leases still held live on, but the worker row removed by beginDrain() stays removed.
      const renewed = await this.leases.renewOwn(this.options.workerId, this.options.capacity, this.options.ttlMs, this.renewIntervalMs * 2, {
        heartbeat: !this.draining,
      });
      const tookMs = Date.now() - startedAt;
      if (tookMs > this.renewIntervalMs / 2) this.logger.warn({ tookMs, leases: renewed.size, ...this.loopLag() }, 'lease renewal was slow');
      if (!this.running) return;
      this.confirmed(startedAt);
      this.reachedAgain(startedAt);
      // Came back late (a loaded event loop): the next tick could come after the cut-off.
      this.renewAgain = startedAt + this.options.ttlMs - this.safetyMarginMs - Date.now() < this.renewIntervalMs;
      for (const [instanceId, lease] of before) {
        if (this.held.get(instanceId) !== lease) continue;
        // Missing: claimed by another worker. Another token: it lapsed and was re-claimed, so this
        // session's writes are already fenced. Either way, stop without writing.
        if (renewed.get(instanceId) !== lease.fencingToken) this.lose(instanceId);
      }
      // Rows of ours no session knows: sessions stopped because this worker was late (nobody else
      // took the row meanwhile), or a claim whose start failed. Take back those still wanted.
      const unknown = [...renewed.keys()].filter((instanceId) => !this.held.has(instanceId) && !this.pending.has(instanceId));
      if (unknown.length && !this.draining) await this.retake(unknown);
    } catch (error) {
      this.logger.warn({ err: error, ...this.loopLag() }, 'lease renewal failed');
      this.unreachable(error);
    }
  }

  /** A renewal failed: when no database answered, the next one is tried soon and the ride-out may begin. */
  private unreachable(error: unknown): void {
    if (!databaseUnavailable(error)) {
      // Answered but failed (or hung until its timeout on an open connection): not an outage every worker
      // shares. Riding out on the strength of an earlier failure ends now.
      this.unreachableSince = null;
      if (this.ridingOut) this.deadlinePassed();
      return;
    }
    this.unreachableSince ??= Date.now();
    if (!this.running) return;
    clearTimeout(this.unreachableRetryTimer);
    this.unreachableRetryTimer = setTimeout(() => this.tickRenew(), Math.min(UNREACHABLE_RETRY_MS, this.renewIntervalMs));
  }

  /** A renewal got through after the database could not be reached: the grace before taking lapsed leases. */
  private reachedAgain(startedAt: number): void {
    clearTimeout(this.unreachableRetryTimer);
    if (this.unreachableSince === null) return;
    this.logger.info(
      { unreachableForMs: startedAt - this.unreachableSince, rodeOut: this.ridingOut, held: this.held.size, graceMs: this.takeoverGraceMs },
      'the database answers again; renewed the leases still ours',
    );
    this.unreachableSince = null;
    this.ridingOut = false;
    this.graceUntil = Date.now() + this.takeoverGraceMs;
    clearTimeout(this.graceTimer);
    // Orphans of workers that did not come back are looked for as soon as the grace ends.
    this.graceTimer = setTimeout(() => this.reconcileSoon(), this.takeoverGraceMs + 10);
  }

  private async retake(instanceIds: string[]): Promise<void> {
    const room = this.options.capacity - (this.held.size + this.pending.size);
    const retaken = await this.leases.retakeOwn(this.options.workerId, instanceIds, this.options.ttlMs, room);
    const kept = new Set(retaken.map((lease) => lease.instanceId));
    // The rest (instances that want no session, or no room): anyone may claim them.
    const rest = instanceIds.filter((id) => !kept.has(id) && !this.held.has(id) && !this.pending.has(id));
    if (rest.length) {
      await this.leases.releaseOwn(this.options.workerId, rest);
      this.logger.info({ released: rest.length }, 'gave back lease rows no session uses');
    }
    if (retaken.length === 0) return;
    this.logger.warn({ retaken: retaken.length }, 'took back leases this worker lost by being late; restarting their sessions');
    // All held at once (the next renewal judges them); their sessions start outside this renewal, so
    // that starting hundreds of them on a loaded event loop never holds the next renewal back.
    for (const lease of retaken) this.held.set(lease.instanceId, lease);
    void this.restartRetaken(retaken);
  }

  private async restartRetaken(retaken: Lease[]): Promise<void> {
    const still = retaken.filter((lease) => this.held.get(lease.instanceId) === lease); // not lost again meanwhile
    if (!this.running || this.draining) {
      for (const lease of still) await this.release(lease).catch(() => undefined);
      return;
    }
    for (let at = 0; at < still.length; at += ADOPTION_BATCH) await this.adopt(still.slice(at, at + ADOPTION_BATCH));
  }

  private async reconcile(): Promise<void> {
    // During an outage of our own and just after it: the other workers renew their lapsed leases first.
    if (this.unreachableSince !== null || Date.now() < this.graceUntil) return;
    try {
      const { target, heirs } = await this.standing();
      // Over the share while another worker has room (it just started, or came back): move some there.
      if (this.onSurplus && surplusOf(this.options.workerId, this.held.size, target, heirs) > 0) this.notifySurplus();
      // Workers scanning together race for the same orphans; the losers look again (3 rounds at most).
      for (let round = 0; round < 3; round++) {
        const inUse = this.held.size + this.pending.size;
        // This worker's part of a drain's instances (by its room under the fair share) is claimed up to its capacity.
        const named = this.announced.take(this.options.capacity - inUse, (id) => this.held.has(id) || this.pending.has(id), heirs, target - inUse);
        const room = target - inUse - named.length;
        if ((room <= 0 && named.length === 0) || !this.running) return;
        const scanned = room > 0 ? await this.leases.findOrphans(room) : [];
        const candidates = [...named, ...scanned.filter((id) => !named.includes(id) && !this.announced.leftToAnother(id))];
        let lostRaces = 0;
        // In batches, each claimed in one statement and adopted together (issue #38: one statement per claim and
        // one per adoption, 8 at once, took 1.8 s to adopt 300 orphans while their handshakes waited). A failed
        // claim ends the reconcile.
        for (let at = 0; at < candidates.length && this.running; at += ADOPTION_BATCH) {
          const { claimed, lost } = await this.claimBatch(candidates.slice(at, at + ADOPTION_BATCH));
          lostRaces += lost;
          await this.adopt(claimed);
        }
        if (lostRaces === 0 || !this.running) return;
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'reconcile failed');
    }
  }

  /**
   * claim() for a reconcile's batch, in one statement: ids held or being claimed here are left out, and no more
   * than the capacity allows is asked for. A claim() of one of them meanwhile (a connect request) waits for the
   * batch's answer. `lost`: asked for and held by another worker.
   */
  private async claimBatch(instanceIds: string[]): Promise<{ claimed: Lease[]; lost: number }> {
    const room = this.options.capacity - (this.held.size + this.pending.size);
    const asked = instanceIds.filter((id) => !this.held.has(id) && !this.pending.has(id)).slice(0, Math.max(0, room));
    if (asked.length === 0) return { claimed: [], lost: 0 };
    const takeLapsed = this.unreachableSince === null && Date.now() >= this.graceUntil;
    const batch = this.leases.claimMany(asked, this.options.workerId, this.options.ttlMs, { takeLapsed }).then((leases) => {
      for (const lease of leases.values()) this.held.set(lease.instanceId, lease);
      return leases;
    });
    for (const id of asked) {
      const one = batch.then((leases): ClaimResult => {
        const lease = leases.get(id);
        return lease ? { kind: 'claimed', lease } : { kind: 'held-elsewhere' };
      });
      one.catch(() => undefined); // a claim() waiting on it hears the failure; nobody else needs to
      this.pending.set(id, one);
    }
    try {
      const leases = await batch;
      return { claimed: asked.flatMap((id) => leases.get(id) ?? []), lost: asked.length - leases.size };
    } finally {
      for (const id of asked) this.pending.delete(id);
    }
  }

  /** Starts the sessions of leases just claimed; when that fails, the leases still held are given back. */
  private async adopt(leases: Lease[]): Promise<void> {
    if (leases.length === 0) return;
    for (const lease of leases) this.logger.info({ instanceId: lease.instanceId }, 'adopting orphaned instance');
    try {
      await this.listener?.orphansClaimed(leases);
    } catch (error) {
      this.logger.error({ err: error, instanceIds: leases.map((lease) => lease.instanceId) }, 'starting adopted sessions failed; releasing them');
      for (const lease of leases) if (this.held.get(lease.instanceId) === lease) await this.release(lease).catch(() => undefined);
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
