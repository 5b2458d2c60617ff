import { InProcessBus, type Bus } from '@gw/bus';
import { randomBytes } from 'node:crypto';
import { Subjects, type ConnectReply, type ConnectRequest, type SendRequest } from '@gw/contracts';
import { InstanceRepository, type InstanceEntity } from '@gw/persistence';
import { openTestDatabase, simulatorControl, type TestDatabase } from '@gw/testing';
import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import pino from 'pino';
import { sessionWorkerConfig, type SessionWorkerConfig } from '../../src/config/session-worker.config';
import { SessionWorker } from '../../src/session-worker';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor<T>(read: () => Promise<T> | T, accept: (value: T) => boolean, timeoutMs: number, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value)?.slice(0, 500)}`);
    await sleep(50);
  }
}

let phoneCounter = Math.floor(Math.random() * 1_000_000);
/** A fresh phone number per test: the simulator keeps accounts for its lifetime. */
export function nextPhone(): string {
  phoneCounter += 1;
  return `5511${String(900_000_000 + phoneCounter).slice(-9)}`;
}

/** One simulator, one database schema and one in-process bus shared by the workers of a suite. */
export class Harness {
  sim!: RunningSimulator;
  db!: TestDatabase;
  bus!: Bus;
  instances!: InstanceRepository;
  private readonly workers: SessionWorker[] = [];
  readonly logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

  async start(): Promise<void> {
    // initialPrekeyCount: the simulator's load mode tells new devices they have enough prekeys. Baileys
    // arms a 30 s timer per prekey upload that is never cleared (socket.js uploadPreKeys), which
    // would keep jest alive long after the suite; the auth-state spec covers key writes instead.
    this.sim = await startSimulator({ logLevel: process.env.SIM_LOG_LEVEL ?? 'silent', initialPrekeyCount: 1000 });
    this.db = await openTestDatabase();
    this.bus = new InProcessBus();
    this.instances = new InstanceRepository(this.db.dataSource);
  }

  /** Stops every worker this harness started (gracefully; halted ones are already gone). */
  async stopWorkers(): Promise<void> {
    for (const worker of this.workers.splice(0)) await worker.stop().catch(() => undefined);
  }

  async stop(): Promise<void> {
    await this.stopWorkers();
    await this.bus?.close();
    await this.sim?.stop();
    await this.db?.close();
  }

  config(overrides: Partial<SessionWorkerConfig> = {}): SessionWorkerConfig {
    return sessionWorkerConfig({
      // Everything (simulator crypto, Baileys, several workers) shares one event loop under jest, where
      // QR PNG encoding alone can block for a second; a shorter TTL makes workers fence themselves.
      leaseTtlMs: 8_000,
      reconcileIntervalMs: 250,
      reconnectBaseMs: 200,
      reconnectMaxMs: 2_000,
      // Baileys leaves a closed socket's pending queries to time out; keep that short so jest exits.
      queryTimeoutMs: 5_000,
      simulator: { websocketUrl: this.sim.websocketUrl, rootPublicKey: Buffer.from(this.sim.rootPublicKey, 'base64') },
      // Test proxies and media servers listen on loopback.
      ssrfAllowlist: ['127.0.0.0/8'],
      ...overrides,
    });
  }

  async startWorker(workerId: string, overrides: Partial<SessionWorkerConfig> = {}): Promise<SessionWorker> {
    const worker = new SessionWorker({ dataSource: this.db.dataSource, bus: this.bus, config: this.config({ workerId, ...overrides }), logger: this.logger });
    this.workers.push(worker);
    await worker.start();
    return worker;
  }

  async newInstance(id: string): Promise<InstanceEntity> {
    return this.instances.create({ id, token: `token-${id}`, name: `name-${id}` });
  }

  row(id: string): Promise<InstanceEntity> {
    return this.instances.findById(id) as Promise<InstanceEntity>;
  }

  place(instanceId: string, connect: Partial<ConnectRequest> = {}): Promise<ConnectReply> {
    const request: ConnectRequest = { instanceId, browser: 'auto', history: { days: 90, fullSync: false }, requestId: `req-${instanceId}`, ...connect };
    return this.bus.request<ConnectReply>(Subjects.place, { instanceId, connect: request }, { timeoutMs: 30_000 });
  }

  /** The simulator's HTTP control API (what a tester or CI script would use). */
  control<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
    return simulatorControl<T>(this.sim, method, path, body);
  }

  /** A text send to `peer`'s phone as the gateway asks the instance's holder for it (the `send` op); its answer. */
  sendText(instanceId: string, peer: string, text: string, timeoutMs = 20_000): Promise<{ status: string }> {
    const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
    const request: SendRequest = {
      instanceId,
      recordId: `r${messageId.slice(-8)}`,
      messageId,
      chatJid: `${peer}@s.whatsapp.net`,
      content: { kind: 'text', text, linkPreview: null },
      record: { sendFunction: '/send/text', sendPayload: { number: peer, text }, trackSource: '', trackId: '', sendFolderId: '' },
    };
    return this.bus.request<{ status: string }>(Subjects.instance(instanceId, 'send'), request, { timeoutMs });
  }

  /** Connects an instance by QR end to end and returns the linked device's JID. */
  async pairByQr(instanceId: string, phone: string, connect: Partial<ConnectRequest> = {}): Promise<string> {
    await this.control('POST', '/sim/accounts', { phone });
    const reply = await this.place(instanceId, connect);
    const device = await this.control<{ jid: string }>('POST', '/sim/scan', { phone, qr: reply.qrcode });
    await waitFor(
      () => this.row(instanceId),
      (row) => row.status === 'connected',
      15_000,
      `${instanceId} connected`,
    );
    return device.jid;
  }

  async connectionEvents(instanceId: string): Promise<Array<Record<string, unknown>>> {
    const rows: Array<{ payload: Record<string, unknown> }> = await this.db.dataSource.query(
      `SELECT payload FROM outbox_events WHERE instance_id = $1 AND event_type = 'connection' ORDER BY id`,
      [instanceId],
    );
    return rows.map((row) => row.payload);
  }
}
