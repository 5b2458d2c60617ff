import { InProcessBus } from '@gw/bus';
import { ASYNC_DISPATCHER_DEFAULTS, AsyncDispatcher, type AsyncDispatcherConfig } from '@gw/dispatch';
import { ChatRepository, InstanceRepository, SendLimitRepository, SendQueueRepository } from '@gw/persistence';
import { createLogger, type Logger } from '@gw/platform';
import { SessionWorker, sessionWorkerConfig, type SessionWorkerConfig } from '@gw/sessions';
import { openTestDatabase, simulatorControl, sleep, waitFor, type TestDatabase } from '@gw/testing';
import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import { startGateway, type GatewayHarness } from './gateway-harness';

// The e2e suites import them from here with the rest of the stack.
export { sleep, waitFor };

let phoneCounter = Math.floor(Math.random() * 1_000_000);
export const nextPhone = (prefix = '5531') => `${prefix}${String(900_000_000 + ++phoneCounter).slice(-9)}`;

/** One message in a simulated phone's inbox, decoded. */
export interface InboxEntry {
  id: string;
  from: string;
  to?: string;
  participant?: string;
  type: string;
  message: Record<string, any>;
}

/** Simulator + database + bus + gateway + one session worker: the whole stack of one process. */
export class Stack {
  sim!: RunningSimulator;
  db!: TestDatabase;
  gw!: GatewayHarness;
  readonly bus = new InProcessBus();
  worker!: SessionWorker;

  /** `logger`: the gateway's and the worker's (default: silent unless TEST_LOG_LEVEL). */
  /** `worker`: settings of the session worker on top of the suites' own (or made from the running simulator). */
  async start(
    env: Record<string, string> = {},
    logger?: Logger,
    worker: Partial<SessionWorkerConfig> | ((sim: RunningSimulator) => Partial<SessionWorkerConfig>) = {},
  ): Promise<void> {
    this.sim = await startSimulator({ logLevel: 'silent', initialPrekeyCount: 1000 });
    this.db = await openTestDatabase();
    this.gw = await startGateway({ bus: this.bus, db: this.db, env: { SSRF_ALLOWLIST: '127.0.0.0/8', ...env }, logger });
    this.worker = new SessionWorker({
      dataSource: this.db.dataSource,
      bus: this.bus,
      logger: logger ?? createLogger('stack', process.env.TEST_LOG_LEVEL ?? 'silent'),
      config: sessionWorkerConfig({
        workerId: 'stack-worker',
        // No takeover in these suites: a long lease keeps a loaded machine from fencing the worker.
        leaseTtlMs: 20_000,
        reconcileIntervalMs: 500,
        queryTimeoutMs: 5_000,
        simulator: { websocketUrl: this.sim.websocketUrl, rootPublicKey: Buffer.from(this.sim.rootPublicKey, 'base64') },
        ssrfAllowlist: ['127.0.0.0/8'],
        ...(typeof worker === 'function' ? worker(this.sim) : worker),
      }),
    });
    await this.worker.start();
  }

  async stop(): Promise<void> {
    await this.worker?.stop().catch(() => undefined);
    await this.gw?.close();
    await this.bus.close();
    await this.sim?.stop();
    await this.db?.close();
  }

  control<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    return simulatorControl<T>(this.sim, method, path, body);
  }

  /**
   * The async queue's dispatcher on this stack's bus and database (started; `stop()` it in afterAll), as
   * the dispatcher process runs it, with quick polls and `overrides`.
   */
  asyncDispatcher(overrides: Partial<AsyncDispatcherConfig> = {}): AsyncDispatcher {
    const source = this.db.dataSource;
    const dispatcher = new AsyncDispatcher(
      new SendQueueRepository(source),
      new InstanceRepository(source),
      new ChatRepository(source),
      this.bus,
      { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'e2e', pollIntervalMs: 200, disconnectedRetryMs: 500, ...overrides },
      createLogger('dispatcher', 'silent'),
      undefined,
      new SendLimitRepository(source),
    );
    dispatcher.start();
    return dispatcher;
  }

  /** A connected instance (linked by QR through the API) and its phone number. */
  async connectedInstance(name = 'inst'): Promise<{ id: string; token: string; phone: string }> {
    const phone = nextPhone();
    await this.control('POST', '/sim/accounts', { phone, name });
    const { id, token } = await this.gw.createInstance(name);
    const qr = await connectForQrCode(this.gw, token, name);
    await this.control('POST', '/sim/scan', { phone, qr });
    await waitFor(
      () => this.gw.call('GET', '/instance/status', { token }),
      (r) => r.body.status?.connected === true,
      20_000,
      `${name} connected`,
    );
    return { id, token, phone };
  }

  /** What a simulated phone received, decoded. */
  async inbox(phone: string, waitMs = 5_000): Promise<InboxEntry[]> {
    return this.control('GET', `/sim/accounts/${phone}/inbox?waitMs=${waitMs}`);
  }

  /** The message `messageId` as the simulated phone decoded it, once it is there (within `timeoutMs`). */
  async received(phone: string, messageId: string, timeoutMs = 10_000): Promise<InboxEntry> {
    const inbox = await waitFor(
      () => this.inbox(phone, 1_000),
      (entries) => entries.some((entry) => entry.id === messageId),
      timeoutMs,
      `message ${messageId} at ${phone}`,
    );
    return inbox.find((entry) => entry.id === messageId)!;
  }
}

/**
 * POST /instance/connect, then the QR code to scan. The answer carries it when the worker had it within
 * its wait (20 s); on a loaded machine it may come later, and a client reads it from /instance/status,
 * as the API document says. A refused connect throws with its answer.
 */
export async function connectForQrCode(gw: GatewayHarness, token: string, name: string): Promise<string> {
  const connect = await gw.call('POST', '/instance/connect', { token, body: {} });
  if (connect.status !== 200) throw new Error(`${name}'s connect: ${connect.status} ${JSON.stringify(connect.body)}`);
  if (connect.body.instance?.qrcode) return connect.body.instance.qrcode as string;
  const status = await waitFor(
    () => gw.call('GET', '/instance/status', { token }),
    (r) => Boolean(r.body.instance?.qrcode),
    30_000,
    `${name}'s QR code`,
  );
  return status.body.instance.qrcode as string;
}
