import { NatsBus } from '@gw/bus';
import { createLogger } from '@gw/platform';
import { SessionWorker, sessionWorkerConfig, type SessionWorkerConfig } from '@gw/sessions';
import { openTestDatabase, simulatorControl, testNatsUrl, type TestDatabase } from '@gw/testing';
import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import { startGateway, type GatewayHarness } from './gateway-harness';
import { nextPhone, waitFor } from './stack';

/** An instance paired through the gateway: its phone and the linked device the simulator made for it. */
export interface PairedInstance {
  id: string;
  token: string;
  phone: string;
  device: string;
}

/**
 * A gateway and session workers started one by one, each worker with a NATS connection of its own (as
 * each process has), over real NATS and Postgres and the simulator: the stack of the suites that move
 * instances between workers (a drain, a rebalance).
 */
export class WorkerStack {
  readonly workers = new Map<string, SessionWorker>();
  readonly workerBuses = new Map<string, NatsBus>();
  sim!: RunningSimulator;
  db!: TestDatabase;
  gw!: GatewayHarness;
  private natsUrl = '';
  private readonly buses: NatsBus[] = [];
  private readonly logger;

  constructor(
    private readonly name: string,
    private readonly workerConfig: Partial<SessionWorkerConfig>,
  ) {
    this.logger = createLogger(`${name}-e2e`, process.env.TEST_LOG_LEVEL ?? 'silent');
  }

  async start(): Promise<void> {
    const url = await testNatsUrl();
    if (!url) throw new Error('this suite needs NATS (NATS_URL or a nats-server on 127.0.0.1:4222)');
    this.natsUrl = url;
    this.sim = await startSimulator({ logLevel: 'silent', initialPrekeyCount: 1000 });
    this.db = await openTestDatabase();
    const gatewayBus = await NatsBus.connect(this.natsUrl, `${this.name}-gateway`);
    this.buses.push(gatewayBus);
    this.gw = await startGateway({ bus: gatewayBus, db: this.db, env: { CONNECT_TIMEOUT_MS: '30000' } });
  }

  async startWorker(workerId: string): Promise<SessionWorker> {
    const bus = await NatsBus.connect(this.natsUrl, workerId);
    this.buses.push(bus);
    this.workerBuses.set(workerId, bus);
    const worker = new SessionWorker({
      dataSource: this.db.dataSource,
      bus,
      logger: this.logger,
      config: sessionWorkerConfig({
        workerId,
        reconnectBaseMs: 200,
        reconnectMaxMs: 2_000,
        queryTimeoutMs: 5_000,
        ...this.workerConfig,
        simulator: { websocketUrl: this.sim.websocketUrl, rootPublicKey: Buffer.from(this.sim.rootPublicKey, 'base64') },
      }),
    });
    await worker.start();
    this.workers.set(workerId, worker);
    return worker;
  }

  /** SIGTERM as the process handles it: the worker drains, then its bus connection closes. */
  async stopWorker(workerId: string): Promise<void> {
    await this.workers.get(workerId)?.stop();
    await this.workerBuses.get(workerId)?.close();
    this.workers.delete(workerId);
  }

  control<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    return simulatorControl<T>(this.sim, method, path, body);
  }

  /** A new phone, an instance connected through the gateway with its QR scanned by that phone, until connected. */
  async pairInstance(name: string, phonePrefix: string): Promise<PairedInstance> {
    const phone = nextPhone(phonePrefix);
    await this.control('POST', '/sim/accounts', { phone });
    const { id, token } = await this.gw.createInstance(name);
    const connect = await this.gw.call('POST', '/instance/connect', { token, body: {} });
    if (connect.status !== 200) throw new Error(`connect answered ${connect.status}: ${JSON.stringify(connect.body)}`);
    const device = await this.control<{ jid: string }>('POST', '/sim/scan', { phone, qr: connect.body.instance.qrcode });
    await waitFor(
      () => this.gw.call('GET', '/instance/status', { token }),
      (r) => r.body.status.connected === true,
      30_000,
      'connected',
    );
    return { id, token, phone, device: device.jid };
  }

  /** Each instance's live lease holder (null: none). */
  async holders(ids: string[]): Promise<Map<string, string | null>> {
    const rows: Array<{ instance_id: string; worker_id: string }> = await this.db.dataSource.query(
      `SELECT instance_id, worker_id FROM session_leases WHERE instance_id = ANY($1::text[]) AND expires_at > now()`,
      [ids],
    );
    return new Map(ids.map((id) => [id, rows.find((row) => row.instance_id === id)?.worker_id ?? null]));
  }

  async close(): Promise<void> {
    for (const worker of this.workers.values()) await worker.stop().catch(() => undefined);
    await this.gw?.close();
    for (const bus of this.buses) await bus.close().catch(() => undefined);
    await this.sim?.stop();
    await this.db?.close();
  }
}
