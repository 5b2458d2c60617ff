import { Bus, InProcessBus, type BusHandler, type BusSubscription, type RequestOptions, type SubscribeOptions } from '@gw/bus';
import { ASYNC_DISPATCHER_DEFAULTS, AsyncDispatcher } from '@gw/dispatch';
import { ChatRepository, InstanceRepository, LeaseRepository, openDatabase, SendQueueRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import type { DataSource } from 'typeorm';
import { SessionWorker, sessionWorkerConfig } from '@gw/sessions';
import { openTestDatabase, simulatorControl, type TestDatabase } from '@gw/testing';
import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import { startGateway, type GatewayHarness } from './gateway-harness';
import { connectForQrCode, waitFor } from './stack';

/**
 * Simulator + database + bus + gateway, and session workers the suite starts and kills by id: for the
 * suites where the worker holding an instance dies (kill -9) and another adopts it once its lease lapses.
 */
export class TakeoverStack {
  sim!: RunningSimulator;
  db!: TestDatabase;
  gw!: GatewayHarness;
  readonly bus = new InProcessBus();
  /** The live workers by id (a halted one is removed). */
  readonly workers = new Map<string, SessionWorker>();
  /** Each worker's own connection to the bus, as each worker process has its own to NATS. */
  private readonly connections = new Map<string, WorkerConnection>();
  /** Workers given a connection pool of their own (as a process has): `kill` ends it with them. */
  private readonly pools = new Map<string, DataSource>();
  readonly logger: ReturnType<typeof createLogger>;

  constructor(loggerName: string) {
    this.logger = createLogger(loggerName, process.env.TEST_LOG_LEVEL ?? 'silent');
  }

  /** An instance linked by QR through the API to the simulator account `phone` (created first), once connected; `device`: the linked companion's JID. */
  async linkedInstance(name: string, phone: string): Promise<{ id: string; token: string; device: { jid: string } }> {
    await this.control('POST', '/sim/accounts', { phone });
    const { id, token } = await this.gw.createInstance(name);
    const qr = await connectForQrCode(this.gw, token, name).catch(async (error: Error) => {
      throw new Error(`${error.message} (${JSON.stringify(await this.diagnose(id))})`);
    });
    const device = await this.control<{ jid: string }>('POST', '/sim/scan', { phone, qr });
    await waitFor(
      () => this.gw.call('GET', '/instance/status', { token }),
      (r) => r.body.status.connected === true,
      20_000,
      'connected',
    );
    return { id, token, device };
  }

  /**
   * The async queue's dispatcher on this stack (started; `stop()` it after), with the holder check that
   * follows a takeover, quick polls, and the worker's answer awaited 40 s (a dead holder must not cost that).
   */
  asyncDispatcher(dispatcherId: string): AsyncDispatcher {
    const source = this.db.dataSource;
    const dispatcher = new AsyncDispatcher(
      new SendQueueRepository(source),
      new InstanceRepository(source),
      new ChatRepository(source),
      this.bus,
      { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId, pollIntervalMs: 200, sendTimeoutMs: 40_000 },
      this.logger,
      new LeaseRepository(source),
    );
    dispatcher.start();
    return dispatcher;
  }

  /** The simulator, a fresh schema, the gateway (connects wait up to 30 s) and a worker for each id. */
  async start(workerIds: string[]): Promise<void> {
    this.sim = await startSimulator({ logLevel: 'silent', initialPrekeyCount: 1000 });
    this.db = await openTestDatabase();
    this.gw = await startGateway({ bus: this.bus, db: this.db, env: { CONNECT_TIMEOUT_MS: '30000' } });
    for (const workerId of workerIds) await this.startWorker(workerId);
  }

  /** `ownPool`: the worker's database connections are its own (application_name = its id), for `kill`. */
  async startWorker(workerId: string, options: { ownPool?: boolean } = {}): Promise<SessionWorker> {
    const connection = new WorkerConnection(this.bus);
    const pool = options.ownPool ? await openDatabase({ url: this.db.url, schema: this.db.schema, poolSize: 5, applicationName: workerId }) : undefined;
    if (pool) this.pools.set(workerId, pool);
    const worker = new SessionWorker({
      dataSource: pool ?? this.db.dataSource,
      bus: connection,
      logger: this.logger,
      config: sessionWorkerConfig({
        workerId,
        // Short enough for the heir to adopt soon after a crash, long enough for a loaded machine.
        leaseTtlMs: 8_000,
        reconcileIntervalMs: 500,
        reconnectBaseMs: 200,
        reconnectMaxMs: 2_000,
        queryTimeoutMs: 5_000,
        simulator: { websocketUrl: this.sim.websocketUrl, rootPublicKey: Buffer.from(this.sim.rootPublicKey, 'base64') },
      }),
    });
    await worker.start();
    this.workers.set(workerId, worker);
    this.connections.set(workerId, connection);
    return worker;
  }

  /**
   * kill -9 of a worker: sockets dropped, its leases left to lapse, nothing written or released, and
   * its connection to the bus gone: its subscriptions vanish and nothing it had taken is answered.
   */
  halt(workerId: string): void {
    this.connections.get(workerId)!.die();
    this.connections.delete(workerId);
    this.workers.get(workerId)!.halt();
    this.workers.delete(workerId);
  }

  /**
   * kill -9 of a worker started with `ownPool`, down to its database connections: `halt`, then its
   * backends are terminated (a statement waiting on a lock never commits) and its pool is ended, so
   * nothing it had begun writes anything afterwards.
   */
  async kill(workerId: string): Promise<void> {
    const pool = this.pools.get(workerId);
    if (!pool) throw new Error(`${workerId} has no pool of its own (startWorker ownPool)`);
    this.halt(workerId);
    this.pools.delete(workerId);
    await this.db.dataSource.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, [workerId]);
    await pool.destroy().catch(() => undefined);
  }

  /**
   * The worker's process stops (the moment before kill -9 lands): requests still reach it and are
   * never answered, nor run. `halt` then finishes it off.
   */
  freeze(workerId: string): void {
    this.connections.get(workerId)!.freeze();
  }

  /** The worker holding a live lease on the instance, or null. */
  async holderOf(instanceId: string): Promise<string | null> {
    const rows: Array<{ worker_id: string }> = await this.db.dataSource.query(
      `SELECT worker_id FROM session_leases WHERE instance_id = $1 AND expires_at > now()`,
      [instanceId],
    );
    return rows[0]?.worker_id ?? null;
  }

  /**
   * What a failed takeover assertion prints: the live workers here, the instance's lease row and the
   * workers' rows (heartbeats), as the database has them.
   */
  async diagnose(instanceId: string): Promise<Record<string, unknown>> {
    const query = (sql: string, params: unknown[] = []) => this.db.dataSource.query(sql, params).catch((error: Error) => error.message);
    return {
      workers: [...this.workers.keys()],
      lease: await query(`SELECT worker_id, fencing_token, expires_at, now() AS now FROM session_leases WHERE instance_id = $1`, [instanceId]),
      sessionWorkers: await query(`SELECT id, capacity, heartbeat_at FROM session_workers ORDER BY id`),
    };
  }

  control<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    return simulatorControl<T>(this.sim, method, path, body);
  }

  async stop(): Promise<void> {
    for (const worker of this.workers.values()) await worker.stop().catch(() => undefined);
    for (const pool of this.pools.values()) await pool.destroy().catch(() => undefined);
    await this.gw?.close();
    await this.sim?.stop();
    await this.db?.close();
  }
}

const never = () => new Promise<never>(() => undefined);

/**
 * A worker's connection to the shared in-process bus, which can die as a process's NATS connection
 * does: its subscriptions go (the server drops them with the socket), and a request it had already
 * taken is never answered: the requester hears nothing until its timeout.
 */
class WorkerConnection extends Bus {
  private frozen = false;
  private readonly subscriptions = new Set<BusSubscription>();

  constructor(private readonly shared: Bus) {
    super();
  }

  request<T>(subject: string, data: unknown, options: RequestOptions): Promise<T> {
    return this.frozen ? never() : this.shared.request<T>(subject, data, options);
  }

  publish(subject: string, data: unknown): void {
    if (!this.frozen) this.shared.publish(subject, data);
  }

  subscribe(subject: string, handler: BusHandler, options?: SubscribeOptions): BusSubscription {
    const answer: BusHandler = async (data, received) => {
      if (this.frozen) return never();
      try {
        const result = await handler(data, received);
        return this.frozen ? never() : result;
      } catch (error) {
        if (this.frozen) return never();
        throw error;
      }
    };
    const subscription = this.shared.subscribe(subject, answer, options);
    const tracked: BusSubscription = {
      unsubscribe: () => {
        this.subscriptions.delete(tracked);
        subscription.unsubscribe();
      },
      drain: () => {
        this.subscriptions.delete(tracked);
        return subscription.drain();
      },
    };
    this.subscriptions.add(tracked);
    return tracked;
  }

  ping(): Promise<void> {
    return this.shared.ping();
  }

  async close(): Promise<void> {
    // The shared bus is the stack's to close.
  }

  freeze(): void {
    this.frozen = true;
  }

  die(): void {
    this.frozen = true;
    for (const subscription of [...this.subscriptions]) subscription.unsubscribe();
  }
}
