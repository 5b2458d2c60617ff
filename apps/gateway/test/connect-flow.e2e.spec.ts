import { InProcessBus } from '@gw/bus';
import { createLogger } from '@gw/platform';
import { SessionWorker, sessionWorkerConfig } from '@gw/sessions';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 400)}`);
    await sleep(100);
  }
}

let phoneCounter = Math.floor(Math.random() * 1_000_000);
const nextPhone = () => `5521${String(900_000_000 + ++phoneCounter).slice(-9)}`;

/**
 * The whole connect flow through HTTP: real Baileys in two session workers, our simulator as
 * WhatsApp, the gateway in front. Create → connect by QR → the simulated phone scans the PNG →
 * connected → status → the holding worker dies (kill -9) → the other one reconnects from the stored
 * auth, no new QR → disconnect → delete; and the pairing-code flow.
 */
describe('connect flow (HTTP → gateway → bus → session workers → Baileys → simulator)', () => {
  let sim: RunningSimulator;
  let db: TestDatabase;
  let gw: GatewayHarness;
  const bus = new InProcessBus();
  const workers = new Map<string, SessionWorker>();
  const logger = createLogger('e2e', process.env.TEST_LOG_LEVEL ?? 'silent');

  const control = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${sim.controlUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const payload = (await response.json()) as T & { error?: string };
    if (!response.ok) throw new Error(`${method} ${path} → ${response.status}: ${payload.error ?? ''}`);
    return payload;
  };

  const startWorker = async (workerId: string) => {
    const worker = new SessionWorker({
      dataSource: db.dataSource,
      bus,
      logger,
      config: sessionWorkerConfig({
        workerId,
        leaseTtlMs: 8_000,
        reconcileIntervalMs: 500,
        reconnectBaseMs: 200,
        reconnectMaxMs: 2_000,
        queryTimeoutMs: 5_000,
        simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
      }),
    });
    await worker.start();
    workers.set(workerId, worker);
    return worker;
  };

  const status = (token: string) => gw.call('GET', '/instance/status', { token });
  const holderOf = async (instanceId: string): Promise<string | null> => {
    const rows: Array<{ worker_id: string }> = await db.dataSource.query(`SELECT worker_id FROM session_leases WHERE instance_id = $1 AND expires_at > now()`, [instanceId]);
    return rows[0]?.worker_id ?? null;
  };

  beforeAll(async () => {
    sim = await startSimulator({ logLevel: 'silent', initialPrekeyCount: 1000 });
    db = await openTestDatabase();
    gw = await startGateway({ bus, db, env: { CONNECT_TIMEOUT_MS: '30000' } });
    await startWorker('worker-a');
    await startWorker('worker-b');
  });

  afterAll(async () => {
    for (const worker of workers.values()) await worker.stop().catch(() => undefined);
    await gw?.close();
    await sim?.stop();
    await db?.close();
  });

  it('should connect by QR, survive the death of its worker, disconnect and delete', async () => {
    const phone = nextPhone();
    await control('POST', '/sim/accounts', { phone, name: 'Loja' });
    const { id, token } = await gw.createInstance('qr-flow');

    const connect = await gw.call('POST', '/instance/connect', { token, body: { browser: 'firefox', systemName: 'CRM Desk', history_days: 30 } });
    expect(connect.status).toBe(200);
    expect(connect.body).toMatchObject({ connected: false, loggedIn: false, jid: null, instance: { status: 'connecting' } });
    expect(connect.body.instance.qrcode).toMatch(/^data:image\/png;base64,/);
    expect(connect.body.request_id).toEqual(expect.any(String));
    expect((await status(token)).body.instance.status).toBe('connecting');

    // The simulated phone scans the QR image, as a camera would.
    const device = await control<{ jid: string }>('POST', '/sim/scan', { phone, qr: connect.body.instance.qrcode });
    const connected = await waitFor(() => status(token), (r) => r.body.status.connected === true, 20_000, 'connected');
    expect(connected.body.status).toMatchObject({ connected: true, loggedIn: true, jid: { user: phone, server: 's.whatsapp.net' } });
    expect(connected.body.instance).toMatchObject({ status: 'connected', owner: phone, qrcode: '', paircode: '' });

    // What the device declared at registration: the browser, the system name and the history asked for.
    const declared = await control<Record<string, unknown>>('GET', `/sim/devices/${encodeURIComponent(device.jid)}`);
    expect(JSON.stringify(declared)).toContain('CRM Desk');
    expect(JSON.stringify(declared).toLowerCase()).toContain('firefox');

    // kill -9 of the holder: the other worker adopts the instance from the stored auth state.
    const holder = await holderOf(id);
    expect(holder).not.toBeNull();
    const survivor = holder === 'worker-a' ? 'worker-b' : 'worker-a';
    workers.get(holder!)!.halt();
    workers.delete(holder!);
    const killedAt = Date.now();
    await waitFor(() => holderOf(id), (worker) => worker === survivor, 15_000, 'adoption by the surviving worker');
    await waitFor(() => status(token), (r) => r.body.status.connected === true, 15_000, 'reconnected');
    const reconnectMs = Date.now() - killedAt;
    expect(reconnectMs).toBeLessThan(20_000);
    // Same linked device, no new pairing.
    const devices = await control<Array<{ jid: string; status: string }>>('GET', `/sim/devices?phone=${phone}`);
    expect(devices.filter((entry) => entry.status === 'active').map((entry) => entry.jid)).toEqual([device.jid]);
    await startWorker(holder!);

    const disconnected = await gw.call('POST', '/instance/disconnect', { token });
    expect(disconnected.status).toBe(200);
    expect(disconnected.body.response).toBe('Disconnected');
    await waitFor(() => status(token), (r) => r.body.instance.status === 'disconnected', 10_000, 'disconnected');
    // The simulator applies the device's logout as its stanza arrives, which can trail the status by a moment.
    const afterLogout = await waitFor(
      () => control<Array<{ jid: string; status: string }>>('GET', `/sim/devices?phone=${phone}`),
      (entries) => entries.find((entry) => entry.jid === device.jid)?.status === 'logged-out',
      10_000,
      'device logged out at the simulator',
    ).catch(() => control<Array<{ jid: string; status: string }>>('GET', `/sim/devices?phone=${phone}`));
    expect(afterLogout.find((entry) => entry.jid === device.jid)?.status).toBe('logged-out');

    const deleted = await gw.call('DELETE', '/instance', { token });
    expect(deleted).toMatchObject({ status: 200, body: { response: 'Instance Deleted' } });
    expect((await status(token)).status).toBe(401);
  }, 90_000);

  it('should connect with a pairing code', async () => {
    const phone = nextPhone();
    await control('POST', '/sim/accounts', { phone });
    const { token } = await gw.createInstance('code-flow');
    const connect = await gw.call('POST', '/instance/connect', { token, body: { phone } });
    expect(connect.status).toBe(200);
    expect(connect.body.instance.paircode).toMatch(/^[A-Z0-9]{4}-?[A-Z0-9]{4}$/);
    await control('POST', '/sim/pair-code', { phone, code: connect.body.instance.paircode });
    const connected = await waitFor(() => status(token), (r) => r.body.status.connected === true, 20_000, 'connected by code');
    expect(connected.body.instance.owner).toBe(phone);
  }, 60_000);

  it('should reconnect an already paired instance without a new QR', async () => {
    const phone = nextPhone();
    await control('POST', '/sim/accounts', { phone });
    const { id, token } = await gw.createInstance('repeat');
    const first = await gw.call('POST', '/instance/connect', { token, body: {} });
    await control('POST', '/sim/scan', { phone, qr: first.body.instance.qrcode });
    await waitFor(() => status(token), (r) => r.body.status.connected === true, 20_000, 'connected');
    // Let go of the session (as a redeploy would), then connect again.
    const holder = await holderOf(id);
    await bus.request(`instance.${id}.release`, { instanceId: id }, { timeoutMs: 10_000 });
    expect(holder).not.toBeNull();
    const again = await gw.call('POST', '/instance/connect', { token, body: {} });
    expect(again.status).toBe(200);
    expect(again.body.instance.qrcode).toBe('');
    await waitFor(() => status(token), (r) => r.body.status.connected === true, 20_000, 'reconnected');
  }, 60_000);
});
