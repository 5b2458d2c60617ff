import { InProcessBus } from '@gw/bus';
import { createLogger } from '@gw/platform';
import { SessionWorker, sessionWorkerConfig } from '@gw/sessions';
import { openTestDatabase, simulatorControl, type TestDatabase } from '@gw/testing';
import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import { startGateway, type GatewayHarness } from './gateway-harness';

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
  readonly logger: ReturnType<typeof createLogger>;

  constructor(loggerName: string) {
    this.logger = createLogger(loggerName, process.env.TEST_LOG_LEVEL ?? 'silent');
  }

  /** The simulator, a fresh schema, the gateway (connects wait up to 30 s) and a worker for each id. */
  async start(workerIds: string[]): Promise<void> {
    this.sim = await startSimulator({ logLevel: 'silent', initialPrekeyCount: 1000 });
    this.db = await openTestDatabase();
    this.gw = await startGateway({ bus: this.bus, db: this.db, env: { CONNECT_TIMEOUT_MS: '30000' } });
    for (const workerId of workerIds) await this.startWorker(workerId);
  }

  async startWorker(workerId: string): Promise<SessionWorker> {
    const worker = new SessionWorker({
      dataSource: this.db.dataSource,
      bus: this.bus,
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
    return worker;
  }

  /** kill -9 of a worker: sockets dropped, its leases left to lapse, nothing written or released. */
  halt(workerId: string): void {
    this.workers.get(workerId)!.halt();
    this.workers.delete(workerId);
  }

  /** The worker holding a live lease on the instance, or null. */
  async holderOf(instanceId: string): Promise<string | null> {
    const rows: Array<{ worker_id: string }> = await this.db.dataSource.query(
      `SELECT worker_id FROM session_leases WHERE instance_id = $1 AND expires_at > now()`,
      [instanceId],
    );
    return rows[0]?.worker_id ?? null;
  }

  control<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    return simulatorControl<T>(this.sim, method, path, body);
  }

  async stop(): Promise<void> {
    for (const worker of this.workers.values()) await worker.stop().catch(() => undefined);
    await this.gw?.close();
    await this.sim?.stop();
    await this.db?.close();
  }
}
