import { NatsBus } from '@gw/bus';
import { createLogger } from '@gw/platform';
import { SessionWorker, sessionWorkerConfig, type SessionWorkerConfig } from '@gw/sessions';
import { openTestDatabase, simulatorControl, testNatsUrl, type TestDatabase } from '@gw/testing';
import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import { startGateway, type GatewayHarness } from './gateway-harness';
import { nextPhone, sleep, waitFor, type InboxEntry } from './stack';

/** An instance paired through the gateway: its phone and the linked device the simulator made for it. */
export interface PairedInstance {
  id: string;
  token: string;
  phone: string;
  device: string;
}

/** A sync send of `flowSends`: its instance, its text, when it started and ended, and the gateway's answer. */
export interface TimedSend {
  instance: string;
  text: string;
  startedAt: number;
  endedAt: number;
  status: number;
  body: unknown;
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

  /**
   * Sync sends from every instance to `peer`, `lanes` at once on each, 50 ms apart, until `stop` (which waits
   * for the sends in flight): the traffic the suites that move instances check. Texts are `<label> <instance> <lane>.<seq>`.
   */
  flowSends(instances: PairedInstance[], peer: string, label: string, lanes: number): { sends: TimedSend[]; stop: () => Promise<void> } {
    const sends: TimedSend[] = [];
    let flowing = true;
    const loops = instances.flatMap(({ id, token }) =>
      Array.from({ length: lanes }, async (_, lane) => {
        for (let seq = 0; flowing; seq++) {
          const text = `${label} ${id} ${lane}.${seq}`;
          const startedAt = Date.now();
          const answer = await this.gw.call('POST', '/send/text', { token, body: { number: peer, text } });
          sends.push({ instance: id, text, startedAt, endedAt: Date.now(), status: answer.status, body: answer.body });
          await sleep(50);
        }
      }),
    );
    return {
      sends,
      stop: async () => {
        flowing = false;
        await Promise.all(loops);
      },
    };
  }

  /** Every text reaches `peer`'s phone, and none reaches it twice. */
  async expectEachTextOnce(peer: string, texts: string[]): Promise<void> {
    const inbox = await waitFor(
      () => this.control<InboxEntry[]>('GET', `/sim/accounts/${peer}/inbox`),
      (entries) => texts.every((text) => entries.some((entry) => JSON.stringify(entry.message).includes(text))),
      20_000,
      'every text delivered',
    );
    for (const text of texts) expect(inbox.filter((entry) => JSON.stringify(entry.message).includes(`"${text}"`))).toHaveLength(1);
  }

  /** Each instance connected, as the same linked device its pairing made (no new QR). */
  async expectConnectedAsPaired(instances: PairedInstance[]): Promise<void> {
    for (const { token, phone, device } of instances) {
      const status = await this.gw.call('GET', '/instance/status', { token });
      expect(status.body.status.connected).toBe(true);
      expect(status.body.instance.status).toBe('connected');
      const devices = await this.control<Array<{ jid: string; status: string }>>('GET', `/sim/devices?phone=${phone}`);
      expect(devices.filter((entry) => entry.status === 'active').map((entry) => entry.jid)).toEqual([device]);
    }
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
