import type { Bus, BusSubscription } from '@gw/bus';
import { Subjects, type HolderRejoined, type LeasesHandedOver } from '@gw/contracts';
import {
  AuthStateRepository,
  BlocklistRepository,
  ChatRepository,
  ContactRepository,
  FileRepository,
  InboundGroupRepository,
  InstanceRepository,
  LabelRepository,
  LeaseRepository,
  LidMappingRepository,
  MessageRepository,
  OutboundLedgerRepository,
  QuickReplyRepository,
  SendLimitRepository,
  type Database,
} from '@gw/persistence';
import { dropSignalSessionDumps, type Logger, metrics, SsrfGuard } from '@gw/platform';
import { setTimeout as sleep } from 'node:timers/promises';
import { SessionRpcServer } from './bus/session-rpc.server';
import type { SessionWorkerConfig } from './config/session-worker.config';
import { LeaseKeeper } from './lease/lease-keeper';
import { InboundMessageObserver } from './messaging/inbound-message.observer';
import { IssuedTcTokenObserver } from './socket/issued-tc-tokens';
import { AbandonedPairingSweeper } from './session/abandoned-pairing-sweeper';
import { SessionManager } from './session/session-manager';
import type { Session } from './session/session';
import { SessionStateWriter } from './session/session-state-writer';
import type { SocketObserver } from './session/socket-observer';
import { applySimulatorSeam } from './socket/network-options';
import { SocketFactory } from './socket/socket-factory';
import { storedMessageLookup } from './socket/stored-messages';
import { MediaSource } from './outbound/media-source';
import { SendContentBuilder } from './outbound/send-content';
import { SendLedger } from './outbound/send-ledger';
import type { OpRegistry } from './ops/op-handler';
import { createOpRegistry } from './ops/op-registry';
import { UnackedSends } from './outbound/unacked-sends';
import { SendLimitObserver } from './outbound/send-limits';
import { moveDelays } from './lease/move-delays';
import { Rebalancer } from './lease/rebalancer';
import { Settling } from './lease/settling';
import { HandshakeGate } from './session/handshake-gate';
import { ReconnectPacer } from './session/reconnect-pacer';

/**
 * How long a session worker process has from SIGTERM to its exit (apps/session-worker's shutdown timer,
 * after which it exits with code 1 whatever is still running). The drain is bounded below it by construction.
 */
export const SHUTDOWN_DEADLINE_MS = 25_000;
/**
 * What the end of a shutdown needs after the drain: the requests still running answered (their wait is
 * cut to what is left), the bus and the pool closed, the health server stopped.
 */
const DRAIN_CLOSE_RESERVE_MS = 3_000;
/**
 * What an instance handed over at the drain's budget needs after it: its socket closed, its Signal state
 * stored (the key commits under way and the creds), its lease handed over and announced.
 */
const DRAIN_FORCED_HAND_OVER_MS = 4_000;
/**
 * The whole drain's budget (issue #39): from the SIGTERM, every instance not handed over by then is
 * handed over anyway, without waiting for its backlog or its ops any more. 18 s of the 25 s deadline.
 */
export const drainBudgetMs = (shutdownDeadlineMs: number) => shutdownDeadlineMs - DRAIN_CLOSE_RESERVE_MS - DRAIN_FORCED_HAND_OVER_MS;
/**
 * A drain hands each instance over once its own ops in flight are done, and every instance within this
 * long at most (a sync send waits up to its own timeout), and never past the drain's budget.
 */
const DRAIN_IN_FLIGHT_MS = 15_000;
/**
 * How long a draining worker keeps serving an instance while it stores the instance's backlog. Bounded:
 * serving adds writes (each send's own copy and receipts), and on a saturated machine a backlog stored
 * while serving did not shrink; the drain then outlived the process's shutdown deadline and the leases
 * were never handed over (bench/cluster rolling at load 10: 25 s drains, Signal sessions diverged).
 */
const DRAIN_SERVING_MS = 2_000;
/**
 * Once an instance's socket is no longer read, how long its hand-over waits for the received messages
 * still being stored (ADR 0042). What is not stored by then is dropped unreceipted and the instance is
 * handed over: WhatsApp delivers those messages again to the heir, which reads each from the plaintext
 * kept with the Signal state. Waiting for the whole backlog made the hand-over as long as the worker was
 * behind its inbound traffic (bench/cluster runs 56–57: 5–12 s at load 11, the rolling restart's p99).
 */
const DRAIN_BACKLOG_STORE_MS = 1_000;
/** A hand-over (refusals to lease handed over) at least this long is logged with its phases. */
const SLOW_HAND_OVER_MS = 1_000;
/**
 * Once the sessions ended, the ops still running (past that wait) are awaited this long at most for their
 * answers (less when the shutdown deadline is nearer): without a socket they end quickly.
 */
const DRAIN_LAST_ANSWERS_MS = 5_000;

/** The repositories the worker uses, each built once per process. */
export interface SessionWorkerRepositories {
  instances: InstanceRepository;
  leases: LeaseRepository;
  authStates: AuthStateRepository;
  messages: MessageRepository;
  chats: ChatRepository;
  contacts: ContactRepository;
  files: FileRepository;
  lidMappings: LidMappingRepository;
  blocklist: BlocklistRepository;
  labels: LabelRepository;
  quickReplies: QuickReplyRepository;
  inboundGroups: InboundGroupRepository;
  ledger: OutboundLedgerRepository;
}

/** The worker's repositories over one pool (Database), for a worker built outside Nest (tests, benches). */
export function sessionWorkerRepositories(dataSource: Database): SessionWorkerRepositories {
  return {
    instances: new InstanceRepository(dataSource),
    leases: new LeaseRepository(dataSource),
    authStates: new AuthStateRepository(dataSource),
    messages: new MessageRepository(dataSource),
    chats: new ChatRepository(dataSource),
    contacts: new ContactRepository(dataSource),
    files: new FileRepository(dataSource),
    lidMappings: new LidMappingRepository(dataSource),
    blocklist: new BlocklistRepository(dataSource),
    labels: new LabelRepository(dataSource),
    quickReplies: new QuickReplyRepository(dataSource),
    inboundGroups: new InboundGroupRepository(dataSource),
    ledger: new OutboundLedgerRepository(dataSource),
  };
}

export interface SessionWorkerOptions {
  /** Migrated pool (Database); owned by the caller (not closed here). Transactions and fenced writes span it. */
  dataSource: Database;
  /** The repositories (SessionWorkerModule injects PersistenceModule's); built from `dataSource` when absent. */
  repositories?: SessionWorkerRepositories;
  /** NATS or in-process bus; owned by the caller. */
  bus: Bus;
  config: SessionWorkerConfig;
  logger: Logger;
  /** Map Baileys events of each socket to records (messages, chats…). */
  socketObservers?: SocketObserver[];
  /** Handlers that replace built-in `instance.<id>.<op>` ones (tests, embedders), typed per op. */
  instanceOps?: Partial<OpRegistry>;
  /**
   * Baileys has event listeners that can reject unobserved (e.g. a reply sent on a socket closing
   * under it). Log such rejections instead of letting Node end the process. Default true.
   */
  guardUnhandledRejections?: boolean;
  /**
   * The process's shutdown deadline (SHUTDOWN_DEADLINE_MS unless given; tests give less): stop() ends
   * within it, every instance handed over by its budget (drainBudgetMs) or left to lapse.
   */
  shutdownDeadlineMs?: number;
}

/** Node 24's pool slab is 64 KiB; this is the 8 KiB of every Node before it. See limitBufferPool. */
export const WORKER_BUFFER_POOL_SIZE = 8 * 1024;

/**
 * Small Buffers (`Buffer.from`, `allocUnsafe`, `concat` under half the pool size) are slices of
 * shared slabs, and a slab stays in memory while any slice of it lives. Every socket keeps a few
 * small slices for its whole life (Baileys' noise keys and frame remainder), and between them the
 * worker's Postgres client fills the pool with short-lived ones: at 64 KiB a slab per instance or so
 * was kept alive, mostly garbage (docs/adr/0016: 54 → 21–24 KB of ArrayBuffers per connected instance
 * at 8 KiB). A process-wide setting of our process, never raised: bare Baileys runs with Node's default.
 */
function limitBufferPool(): void {
  if (Buffer.poolSize > WORKER_BUFFER_POOL_SIZE) Buffer.poolSize = WORKER_BUFFER_POOL_SIZE;
}

/** One session worker: lease keeper + sessions + bus handlers, started and stopped together. */
export class SessionWorker {
  readonly keeper: LeaseKeeper;
  readonly manager: SessionManager;
  readonly sweeper: AbandonedPairingSweeper;
  readonly inbound: InboundMessageObserver;
  private readonly rpc: SessionRpcServer;
  private readonly media: MediaSource;
  private readonly logger: Logger;
  private rejectionGuard: ((reason: unknown) => void) | null = null;
  private readonly metricsSources = { inboundBacklog: () => this.inbound.backlog() };
  private state: 'new' | 'running' | 'stopped' = 'new';
  private readonly unacked: UnackedSends;
  private handOverSubscription: BusSubscription | null = null;
  /** Moves instances to workers with room while this one is over its fair share (ADR 0043). */
  private readonly rebalancer: Rebalancer;
  /** Whether it has settled since its start (its `/ready`, ADR 0057); set by start(). */
  private settling: Settling | null = null;

  constructor(private readonly options: SessionWorkerOptions) {
    const { dataSource, bus, config } = options;
    this.logger = options.logger.child({ workerId: config.workerId });
    const repositories = options.repositories ?? sessionWorkerRepositories(dataSource);
    const { instances } = repositories;
    this.keeper = new LeaseKeeper(
      repositories.leases,
      {
        workerId: config.workerId,
        capacity: config.capacity,
        ttlMs: config.leaseTtlMs,
        reconcileIntervalMs: config.reconcileIntervalMs,
        firstReconcileDelayMs: config.firstReconcileDelayMs,
        outageRideMs: config.leaseOutageRideMs,
      },
      this.logger,
    );
    const writer = new SessionStateWriter(instances, bus, this.logger);
    this.inbound = new InboundMessageObserver({
      dataSource,
      bus,
      logger: this.logger,
      repositories,
      bounds: { socketMax: config.inboundQueueMax, workerMax: config.inboundWorkerQueueMax },
      // A database outage is waited out while the keeper holds the lease (issue #39).
      held: (lease) => this.keeper.holds(lease.instanceId)?.fencingToken === lease.fencingToken,
    });
    // Abandoned pairings are rare; every few reconcile intervals is soon enough.
    this.sweeper = new AbandonedPairingSweeper(instances, writer, this.logger, config.reconcileIntervalMs * 5);
    const limits = new SendLimitRepository(dataSource);
    this.manager = new SessionManager(
      instances,
      this.keeper,
      {
        config,
        instances,
        authStates: repositories.authStates,
        writer,
        sockets: new SocketFactory(config, storedMessageLookup(repositories.messages)),
        handshakes: new HandshakeGate(config.handshakeConcurrency, config.handshakeHoldMs),
        // Backoffs grown during an outage are cut to a short jitter once one session is back (or the scout
        // finds the server back): recovery follows the server, not the longest backoff (issue #34).
        pacer: new ReconnectPacer({ resumeJitterMs: config.reconnectBaseMs, scoutIntervalMs: 2 * config.reconnectBaseMs, scoutMinWaiting: 3 }),
        // Inbound messages, receipts, contacts and chats of every socket; then the embedder's own.
        observers: [this.inbound, new IssuedTcTokenObserver(), new SendLimitObserver(limits), ...(options.socketObservers ?? [])],
        logger: this.logger,
      },
      this.logger,
    );
    const ledger = new SendLedger(repositories.messages, repositories.ledger);
    // Sessions that are open: their sent messages without a server ack are resent, then failed.
    this.unacked = new UnackedSends(
      repositories.messages,
      () =>
        this.inbound.unackedTargets(
          this.manager
            .all()
            .filter((session) => session.currentPhase === 'open')
            .map((session) => session.instanceId),
        ),
      config,
      this.logger,
    );
    this.media = new MediaSource(repositories.files, new SsrfGuard(config.ssrfAllowlist ?? []));
    const ops = createOpRegistry(
      {
        ledger,
        builder: new SendContentBuilder(ledger, this.media),
        chats: repositories.chats,
        limits,
        files: repositories.files,
        instances,
        inbound: this.inbound,
        logger: this.logger,
        simulator: config.simulator,
        media: this.media,
        config,
      },
      options.instanceOps,
    );
    this.rpc = new SessionRpcServer(bus, this.manager, this.logger, ops);
    this.rebalancer = new Rebalancer({
      surplus: () => this.keeper.surplus(),
      next: () => this.nextToMove(),
      move: (instanceId) => this.moveAway(instanceId),
      logger: this.logger,
    });
  }

  get workerId(): string {
    return this.options.config.workerId;
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('session worker already started');
    this.state = 'running';
    if (this.options.guardUnhandledRejections ?? true) {
      this.rejectionGuard = (reason) => this.logger.error({ err: reason }, 'unhandled rejection (kept the process alive)');
      process.on('unhandledRejection', this.rejectionGuard);
    }
    // libsignal prints session records (private keys) to stdout when it rotates sessions.
    dropSignalSessionDumps();
    limitBufferPool();
    applySimulatorSeam(this.options.config.simulator, this.logger);
    // A worker that drains hands its instances over and says so: adopt them now, not at the next reconcile.
    this.handOverSubscription = this.options.bus.subscribe(Subjects.leasesHandedOver, (data) => {
      const notice = data as Partial<LeasesHandedOver> | null;
      if (notice?.workerId !== this.workerId)
        this.keeper.reconcileSoon(Array.isArray(notice?.instanceIds) ? notice.instanceIds : [], namedHeirs(notice?.heirs));
      return undefined;
    });
    this.keeper.setHandOverListener((instanceIds, heirs) => {
      const notice: LeasesHandedOver = { workerId: this.workerId, instanceIds, heirs };
      this.options.bus.publish(Subjects.leasesHandedOver, notice);
    });
    if (this.options.config.rebalance) this.keeper.setSurplusListener(() => this.rebalancer.nudge());
    // Back on a NATS server after losing one: what was routed to us through it is lost, so the requesters of our
    // instances' repeatable requests (sends) try again now rather than at their timeout (issue #39).
    this.options.bus.onRejoin(() => {
      if (this.state !== 'running') return;
      const notice: HolderRejoined = { workerId: this.workerId, instanceIds: this.manager.all().map((session) => session.instanceId) };
      this.logger.warn(
        { instances: notice.instanceIds.length },
        'the bus is back on a NATS server: requests to our instances may have been lost with the other; told their requesters',
      );
      this.options.bus.publish(Subjects.holderRejoined, notice);
    });
    this.settling = new Settling({
      maxMs: this.options.config.readySettleMaxMs,
      looked: () => this.keeper.looked,
      opening: () => this.manager.all().filter((session) => session.opening).length,
      owed: () => this.keeper.owed(this.options.config.rebalance),
      logger: this.logger,
    });
    await this.keeper.start(this.manager);
    metrics().useSources(this.metricsSources);
    this.rpc.start();
    this.sweeper.start();
    this.unacked.start();
    this.logger.info({ capacity: this.options.config.capacity, leaseTtlMs: this.options.config.leaseTtlMs }, 'session worker started');
  }

  /**
   * A readiness check of the worker's `/ready` beyond Postgres and NATS (ADR 0057): rejects, saying why, until the
   * worker has settled after its start (its part of the instances taken and their sessions open, or
   * WORKER_READY_SETTLE_MS passed), and once it drains.
   */
  async settled(): Promise<void> {
    if (this.state === 'stopped') throw new Error('draining');
    if (this.state !== 'running' || !this.settling) throw new Error('not started');
    await this.settling.check();
  }

  /**
   * Graceful (SIGTERM), a drain (issue #39): stop taking new instances, then, for every instance in
   * parallel (their starts a few at a time: moveDelays), store the backlog its socket received while it
   * still serves (sends and all), and only then refuse its new ops, finish those in flight, store what came meanwhile (for
   * DRAIN_BACKLOG_STORE_MS at most; the rest WhatsApp delivers again to the heir, ADR 0042), close the socket
   * without logout, store its Signal state and hand its lease over at once, announced on the bus so that
   * another worker adopts it now (not when the lease would have expired, nor once the slowest send of
   * another instance is done); then deregister.
   *
   * Bounded by construction below the process's shutdown deadline (ADR 0039): at the drain's budget
   * (drainBudgetMs: 18 s of 25 s) no instance waits for its serving time or its ops any more: its socket
   * is no longer read, what Baileys decrypted is stored for DRAIN_BACKLOG_STORE_MS and never past the last
   * store moment (lastStoreAt, 2.5 s before the drain's end), then what is left is dropped (none was
   * receipted, ADR 0035: the heir reads each copy WhatsApp delivers again from its kept plaintext), the socket
   * closes, the Signal state under way is stored, and the lease is handed over. An instance whose Signal
   * state cannot be stored in time is not handed over: its session ends without a write and its lease lapses.
   */
  async stop(): Promise<void> {
    if (this.state !== 'running') return;
    this.state = 'stopped';
    const clock = new DrainClock(this.options.shutdownDeadlineMs ?? SHUTDOWN_DEADLINE_MS);
    await clock.within(this.rpc.stopAccepting(), clock.budgetAt);
    this.handOverSubscription?.unsubscribe();
    // A rebalance's move under way ends as it would have (its lease handed over); no other starts.
    const rebalanceStopped = this.rebalancer.stop();
    const movingAway = this.rebalancer.moving;
    // Out of the others' fair share at once; no more adoption; leases given back from now on are handed over.
    await clock.within(this.keeper.beginDrain(), clock.budgetAt);
    await clock.within(Promise.all([this.sweeper.stop(), this.unacked.stop()]), clock.budgetAt);
    // The instances move a few at a time, on a clock (moveDelays), the others serving until their turn.
    const sessions = this.manager.all().filter((session) => session.instanceId !== movingAway);
    const delays = moveDelays(sessions.length);
    const moves = sessions.map(async (session, index) => {
      await sleep(delays[index]);
      return this.handOver(session, clock);
    });
    const [handedOver] = await Promise.all([clock.within(Promise.all(moves), clock.endAt), clock.within(rebalanceStopped, clock.endAt)]);
    this.rpc.beginDrain();
    // A session left (its hand-over failed): once more, within what is left; past that, it ends without a
    // write (its Signal state was not seen stored) and its lease lapses instead of being handed over.
    await clock.within(Promise.all(this.manager.all().map((session) => this.handOver(session, clock))), clock.endAt);
    for (const session of this.manager.all()) session.abort('worker shutdown: not handed over within the drain; the lease is left to lapse');
    await clock.within(this.keeper.shutdown(), clock.endAt + DRAIN_CLOSE_RESERVE_MS / 3);
    // Every request taken is answered before the caller closes the bus (a late one: No session, tried again by the gateway).
    await this.rpc.close(Math.min(DRAIN_LAST_ANSWERS_MS, clock.until(clock.endAt + DRAIN_CLOSE_RESERVE_MS / 3)));
    const times = handedOver ?? [];
    this.logger.info(
      { drainMs: clock.elapsed(), instances: times.length, slowestHandOverMs: Math.max(0, ...times), forced: clock.forced.size },
      'session worker drained',
    );
    clock.dispose();
    await this.media.close();
    metrics().dropSources(this.metricsSources);
    this.removeGuard();
    this.logger.info('session worker stopped');
  }

  /**
   * One instance of a drain. First what its socket received so far is stored while it keeps serving
   * (for DRAIN_SERVING_MS at most): the backlog (a worker that adopted instances a moment ago may hold
   * thousands of writes) is what a drain waited for, with the instance refusing every send meanwhile
   * (bench/cluster run 31: p99 14.8 s). Then its ops are refused, those in flight finish (for
   * DRAIN_IN_FLIGHT_MS at most), its socket is no longer read, what Baileys decrypted meanwhile is stored
   * for DRAIN_BACKLOG_STORE_MS at most (the rest is dropped unreceipted, for WhatsApp to deliver again to
   * the heir), and the session closes, stores its Signal state and hands its lease over (LeaseKeeper.release
   * while draining). Past the drain's budget it waits for neither the serving time nor its ops.
   * The time from its refusals to its hand-over; -1 when it failed (the instance is tried once more).
   */
  private async handOver(session: Session, clock: DrainClock, reason?: string): Promise<number> {
    const instanceId = session.instanceId;
    try {
      const queuedAtDrain = this.inbound.queuedFor(instanceId);
      await clock.orCut(atMost(this.inbound.drainInstance(instanceId), DRAIN_SERVING_MS));
      const queuedAtRefusal = this.inbound.queuedFor(instanceId);
      const started = Date.now();
      this.rpc.beginDrainOf(instanceId);
      await clock.orCut(this.rpc.settleInstance(instanceId, DRAIN_IN_FLIGHT_MS));
      const settled = Date.now();
      // Its ops are done (or the budget is spent): Baileys decrypts nothing more here. A frame not read is
      // delivered to the heir, which decrypts it with the Signal state stored below. What was decrypted and
      // is not stored within DRAIN_BACKLOG_STORE_MS is dropped unreceipted: WhatsApp delivers it again to
      // the heir, which reads it from the plaintext kept with that state (ADR 0035, ADR 0042).
      this.inbound.stopReading(instanceId);
      const queuedAtStop = this.inbound.queuedFor(instanceId);
      if (clock.cut) clock.forced.add(instanceId);
      const storedAll = await clock.within(
        this.inbound.drainInstance(instanceId).then(() => true),
        Math.min(clock.lastStoreAt, Date.now() + DRAIN_BACKLOG_STORE_MS),
      );
      const stored = Date.now();
      if (!storedAll) {
        const dropped = this.inbound.dropInstance(session.lease);
        // Routine at load (ADR 0042); the kept plaintexts' hashes are logged by the inbound handler (warn).
        this.logger.info(
          { instanceId, droppedWrites: dropped.writes, unreceipted: dropped.unreceipted, drainMs: clock.elapsed(), cut: clock.cut },
          'handing the instance over with its unstored received messages left to WhatsApp (not receipted: delivered again to the heir, which reads them from the kept plaintexts)',
        );
      }
      // The Signal state may take until the drain's end, less a moment for the hand-over statement.
      const left = clock.until(clock.endAt - DRAIN_HAND_OVER_STATEMENT_MS);
      await session.shutdown({ signalStateMs: left, rowWriteMs: clock.until(clock.endAt - DRAIN_HAND_OVER_STATEMENT_MS), reason });
      const took = Date.now() - started;
      // Where an instance's unavailability went, when it was long (bench/cluster reads these at info).
      if (took >= SLOW_HAND_OVER_MS) {
        // The inbound tasks left at the drain's start, at the refusals and when the socket stopped being read: what the store phase had to do.
        const phases = { settleMs: settled - started, storeMs: stored - settled, closeMs: Date.now() - stored, queuedAtDrain, queuedAtRefusal, queuedAtStop };
        this.logger.info({ instanceId, handOverMs: took, ...phases }, 'a slow hand-over');
      }
      return took;
    } catch (error) {
      this.logger.warn({ err: error, instanceId }, 'handing an instance over failed; it is tried once more');
      return -1;
    }
  }

  /**
   * The next instance a rebalance moves: an open session not being handed over, the one with the fewest ops
   * running (a send in flight is finished before its instance moves: the others go first).
   */
  private nextToMove(): string | undefined {
    let best: { instanceId: string; inFlight: number } | undefined;
    for (const session of this.manager.all()) {
      if (session.currentPhase !== 'open' || this.rpc.isHandingOver(session.instanceId) || !this.keeper.holds(session.instanceId)) continue;
      const inFlight = this.rpc.inFlightCount(session.instanceId);
      if (!best || inFlight < best.inFlight) best = { instanceId: session.instanceId, inFlight };
      if (inFlight === 0) break;
    }
    return best?.instanceId;
  }

  /**
   * A rebalance's move of one instance (ADR 0043): the hand-over a drain makes of it, under a drain's bounds,
   * its lease handed over and announced so that a worker with room adopts it now. When it fails with the
   * session still here, the session serves again (restarted: its socket was no longer read).
   */
  private async moveAway(instanceId: string): Promise<boolean> {
    const session = this.manager.get(instanceId);
    if (!session || session.currentPhase !== 'open' || !this.keeper.beginMove(instanceId)) return false;
    const clock = new DrainClock(this.options.shutdownDeadlineMs ?? SHUTDOWN_DEADLINE_MS);
    let took = -1;
    try {
      took = await this.handOver(session, clock, 'moved to another session worker (rebalance)');
    } finally {
      clock.dispose();
      this.keeper.endMove(instanceId);
    }
    const stillHere = this.manager.get(instanceId) === session;
    if (took >= 0 && !stillHere) {
      metrics().instanceMoves.inc({ outcome: 'moved' });
      return true;
    }
    metrics().instanceMoves.inc({ outcome: 'failed' });
    // Stopping meanwhile (a SIGTERM during the move): the drain's second pass hands it over; nothing restarts.
    if (stillHere && this.state === 'running') {
      this.logger.warn({ instanceId }, 'moving the instance to another worker failed; it is served here again');
      this.rpc.resumeInstance(instanceId);
      void session.restart().catch((error: unknown) => this.logger.warn({ err: error, instanceId }, 'restarting a session after a failed move failed'));
    }
    return false;
  }

  /** Test aid that behaves like `kill -9`: subscriptions gone, sockets dropped, nothing written or released. */
  halt(): void {
    if (this.state !== 'running') return;
    this.state = 'stopped';
    this.rpc.stop();
    this.handOverSubscription?.unsubscribe();
    void this.rebalancer.stop();
    void this.sweeper.stop();
    void this.unacked.stop();
    this.keeper.halt();
    this.manager.haltAll();
    metrics().dropSources(this.metricsSources);
    this.removeGuard();
  }

  private removeGuard(): void {
    if (this.rejectionGuard) process.off('unhandledRejection', this.rejectionGuard);
    this.rejectionGuard = null;
  }
}

/** The time a forced hand-over keeps for its hand-over statement and announcement after its Signal state. */
const DRAIN_HAND_OVER_STATEMENT_MS = 1_000;

/** What a hand-over needs after its last store: its Signal state stored, then the hand-over statement. */
const DRAIN_LAST_STORE_RESERVE_MS = 2_500;

/** The drain's times, from the SIGTERM: its budget, where every instance is handed over at once, and its end. */
class DrainClock {
  private readonly startedAt = Date.now();
  /** From here on, no instance waits for its backlog or its ops: it is handed over at once. */
  readonly budgetAt: number;
  /** The drain's end: what is not done by then is left (leases to lapse); the close reserve follows. */
  readonly endAt: number;
  /**
   * The last moment a drain waits for an instance's received messages to be stored: after it, what is
   * left of them is dropped so that its Signal state can still be stored and its lease handed over.
   */
  readonly lastStoreAt: number;
  /** Instances handed over at the budget. */
  readonly forced = new Set<string>();
  private readonly reached: Promise<void>;
  private timer: NodeJS.Timeout | undefined;

  constructor(shutdownDeadlineMs: number) {
    this.budgetAt = this.startedAt + drainBudgetMs(shutdownDeadlineMs);
    this.endAt = this.startedAt + shutdownDeadlineMs - DRAIN_CLOSE_RESERVE_MS;
    this.lastStoreAt = this.endAt - DRAIN_LAST_STORE_RESERVE_MS;
    this.reached = new Promise<void>((resolve) => (this.timer = setTimeout(resolve, Math.max(0, this.budgetAt - this.startedAt))));
    this.timer?.unref();
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  /** Whether the budget is spent. */
  get cut(): boolean {
    return Date.now() >= this.budgetAt;
  }

  /** Milliseconds from now until `at` (0 once past). */
  until(at: number): number {
    return Math.max(0, at - Date.now());
  }

  elapsed(): number {
    return Date.now() - this.startedAt;
  }

  /** Waits for `work` until the budget is spent (the work goes on; its failure is its own to report). */
  async orCut(work: Promise<unknown>): Promise<void> {
    if (this.cut) return;
    await Promise.race([work.catch(() => undefined), this.reached]);
  }

  /** `work`'s value if it settles by `at`, else undefined (it goes on; its failure is its own to report). */
  async within<T>(work: Promise<T>, at: number): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), this.until(at))));
    try {
      return await Promise.race([work.catch(() => undefined), late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Waits for `work`, for at most `ms` (the work goes on; its failure is its own to report). */
async function atMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** A notice's `heirs` (ADR 0058), its string entries only; nothing from a notice that has none (an older worker's). */
function namedHeirs(heirs: unknown): Record<string, string> {
  if (!heirs || typeof heirs !== 'object' || Array.isArray(heirs)) return {};
  return Object.fromEntries(Object.entries(heirs as Record<string, unknown>).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}
