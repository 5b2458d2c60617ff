import { createServer, type Server } from 'node:http';
import { connect as tcpConnect, type AddressInfo } from 'node:net';
import { Subjects, type ConnectReply, type StatusReply } from '@gw/contracts';
import { LeaseRepository } from '@gw/persistence';
import pino from 'pino';
import { SessionWorker } from '../src/session-worker';
import { Harness, nextPhone, waitFor } from './support/harness';

jest.setTimeout(40_000);

interface DeviceInfo {
  jid: string;
  status: string;
  connected: boolean;
  loginCount: number;
  pairingMethod: string;
  deviceListQueries: number;
}

describe('Session lifecycle against the simulator', () => {
  const harness = new Harness();
  const leases = () => new LeaseRepository(harness.db.dataSource);
  const device = (jid: string) => harness.control<DeviceInfo>('GET', `/sim/devices/${encodeURIComponent(jid)}`);
  const op = <T>(instanceId: string, name: Parameters<typeof Subjects.instance>[1], body: Record<string, unknown> = {}) =>
    harness.bus.request<T>(Subjects.instance(instanceId, name), { instanceId, ...body }, { timeoutMs: 10_000 });

  /** After `cut` (a dropped connection, a restart), the device logs in again and the instance's row says connected. */
  const reconnectsAfter = async (instanceId: string, jid: string, cut: () => unknown) => {
    const loginsBefore = (await device(jid)).loginCount;
    await cut();
    await waitFor(
      () => device(jid),
      (d) => d.connected && d.loginCount > loginsBefore,
      10_000,
      'logged in again',
    );
    await waitFor(
      () => harness.row(instanceId),
      (r) => r.status === 'connected',
      5_000,
      'connected',
    );
  };
  /** The simulator cuts the device's connection; the session logs in again and its row says connected. */
  const dropAndReconnect = (instanceId: string, jid: string) =>
    reconnectsAfter(instanceId, jid, () => harness.control('POST', `/sim/devices/${encodeURIComponent(jid)}/drop`, {}));

  beforeAll(() => harness.start());
  afterAll(() => harness.stop());

  describe('with one worker', () => {
    beforeAll(async () => {
      await harness.startWorker('w-main');
    });

    it('should report a logout from the phone: disconnected with reason, credentials cleared, LoggedOut event', async () => {
      const phone = nextPhone();
      await harness.newInstance('phone-logout');
      const jid = await harness.pairByQr('phone-logout', phone);
      await harness.control('POST', `/sim/devices/${encodeURIComponent(jid)}/logout`, {});

      const row = await waitFor(
        () => harness.row('phone-logout'),
        (r) => r.status === 'disconnected',
        10_000,
        'disconnected',
      );
      expect(row).toMatchObject({ paired: false, desiredState: 'disconnected', lastDisconnectReason: '401: logged out from another device' });
      expect(row.lastDisconnect).toBeInstanceOf(Date);
      expect(await harness.db.dataSource.query(`SELECT 1 FROM auth_creds WHERE instance_id = 'phone-logout'`)).toEqual([]);
      expect(await harness.db.dataSource.query(`SELECT 1 FROM auth_keys WHERE instance_id = 'phone-logout'`)).toEqual([]);
      expect(await leases().holderOf('phone-logout')).toBeNull();
      const last = (await harness.connectionEvents('phone-logout')).at(-1);
      expect(last).toEqual({
        EventType: 'connection',
        type: 'LoggedOut',
        instanceName: 'name-phone-logout',
        owner: phone,
        instance: {
          name: 'name-phone-logout',
          status: 'disconnected',
          lastDisconnect: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z$/),
          lastDisconnectReason: '401: logged out from another device',
        },
      });
    });

    it('should log out on request: device unlinked at the simulator, credentials cleared', async () => {
      await harness.newInstance('api-logout');
      const jid = await harness.pairByQr('api-logout', nextPhone());
      const reply = await op<StatusReply>('api-logout', 'logout');
      expect(reply).toEqual({ status: 'disconnected', loggedIn: false, jid: null });
      await waitFor(
        () => device(jid),
        (d) => d.status === 'logged-out',
        5_000,
        'device logged out at the simulator',
      );
      expect(await harness.row('api-logout')).toMatchObject({ paired: false, desiredState: 'disconnected' });
      expect(await harness.db.dataSource.query(`SELECT 1 FROM auth_creds WHERE instance_id = 'api-logout'`)).toEqual([]);
    });

    it('should reconnect after the connection drops, saying so meanwhile', async () => {
      await harness.newInstance('dropped');
      const jid = await harness.pairByQr('dropped', nextPhone());
      await dropAndReconnect('dropped', jid);
      const statuses = (await harness.connectionEvents('dropped')).map((event) => (event.instance as { status: string }).status);
      expect(statuses.slice(-2)).toEqual(['connecting', 'connected']);
      const reconnecting = (await harness.connectionEvents('dropped')).at(-2)!.instance as Record<string, string>;
      expect(reconnecting.lastDisconnectReason).toMatch(/^4\d\d: connection/);
    });

    it("should keep the instance's device lists across its sockets: a send after a reconnect asks WhatsApp for none", async () => {
      const peer = nextPhone();
      await harness.control('POST', '/sim/accounts', { phone: peer });
      await harness.newInstance('device-lists');
      const jid = await harness.pairByQr('device-lists', nextPhone());
      const send = async (text: string) => expect((await harness.sendText('device-lists', peer, text)).status).toBe('Sent');
      await send('first');
      // The first send asked for the peer's devices (and the account's own).
      const queried = (await device(jid)).deviceListQueries;
      expect(queried).toBeGreaterThan(0);
      await dropAndReconnect('device-lists', jid);
      await send('after the reconnect');
      expect((await device(jid)).deviceListQueries).toBe(queried);
      expect((await harness.control<Array<{ message: unknown }>>('GET', `/sim/accounts/${peer}/inbox`)).map((entry) => JSON.stringify(entry.message))).toEqual([
        expect.stringContaining('first'),
        expect.stringContaining('after the reconnect'),
      ]);
    });

    it('should reconnect every session gracefully on restartAll', async () => {
      await harness.newInstance('restarted');
      const jid = await harness.pairByQr('restarted', nextPhone());
      await reconnectsAfter('restarted', jid, () => harness.bus.publish(Subjects.restartAll, {}));
      expect((await device(jid)).status).toBe('active');
    });

    it('should answer status, presence and privacy for a connected instance', async () => {
      const phone = nextPhone();
      await harness.newInstance('ops');
      await harness.pairByQr('ops', phone);
      expect(await op<StatusReply>('ops', 'status')).toMatchObject({ status: 'connected', loggedIn: true, jid: { user: phone, server: 's.whatsapp.net' } });

      expect(await op('ops', 'presence', { presence: 'unavailable' })).toEqual({ ok: true });
      expect((await harness.row('ops')).currentPresence).toBe('unavailable');
      await expect(op('ops', 'presence', { presence: 'busy' })).rejects.toMatchObject({ code: 'bad_request' });

      const privacy = await op<Record<string, string>>('ops', 'privacy.get');
      expect(typeof privacy).toBe('object');
      await expect(op('ops', 'privacy.set', { settings: { readreceipts: 'sometimes' } })).rejects.toMatchObject({ code: 'bad_request' });
      const updated = await op<Record<string, string>>('ops', 'privacy.set', { settings: { readreceipts: 'none' } });
      expect(typeof updated).toBe('object');
    });

    it('should release without logout: disconnected on purpose, credentials kept, next connect reuses them', async () => {
      await harness.newInstance('released');
      const jid = await harness.pairByQr('released', nextPhone());
      expect(await op('released', 'release')).toEqual({ released: true });
      expect(await harness.row('released')).toMatchObject({
        status: 'disconnected',
        desiredState: 'disconnected',
        paired: true,
        lastDisconnectReason: 'disconnected by request',
      });
      expect(await leases().holderOf('released')).toBeNull();
      await expect(op('released', 'status')).rejects.toMatchObject({ code: 'no_session' });

      const reply = await harness.place('released');
      expect(reply).toMatchObject({ status: 'connected', loggedIn: true, qrcode: '' });
      expect((await device(jid)).status).toBe('active');
    });

    it('should stop a session at once when another worker took its lease over, writing nothing', async () => {
      await harness.newInstance('fenced');
      const jid = await harness.pairByQr('fenced', nextPhone());
      const eventsBefore = (await harness.connectionEvents('fenced')).length;
      // another worker takes the lease over (forced: the row is made to lapse first)
      await harness.db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = 'fenced'`);
      expect(await leases().claim('fenced', 'w-thief', 60_000)).not.toBeNull();

      // the holder's next write is refused (presence is stored on the row; Baileys may write keys
      // first), and that ends the session
      const refused = await op('fenced', 'presence', { presence: 'unavailable' }).catch((error: { code: string }) => error);
      expect(['fenced', 'no_session']).toContain((refused as { code: string }).code);
      await expect(op('fenced', 'status')).rejects.toMatchObject({ code: 'no_session' });
      await waitFor(
        () => device(jid),
        (d) => !d.connected,
        5_000,
        'socket closed',
      );
      const row = await harness.row('fenced');
      expect(row).toMatchObject({ status: 'connected', paired: true });
      expect(await harness.connectionEvents('fenced')).toHaveLength(eventsBefore);
      expect(await harness.db.dataSource.query(`SELECT 1 FROM auth_creds WHERE instance_id = 'fenced'`)).toHaveLength(1);
    });

    it('should connect through a custom proxy set on the instance', async () => {
      const { server, targets } = await startConnectProxy();
      try {
        await harness.newInstance('proxied');
        const proxyUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        await harness.instances.update('proxied', {
          proxy: { mode: 'custom', proxyUrl, proxyFallback: null, managed: null, lastTestAt: null, lastTestError: null },
        });
        await harness.pairByQr('proxied', nextPhone());
        expect(targets).toContain(new URL(harness.sim.websocketUrl).host);
      } finally {
        server.closeAllConnections();
        server.close();
      }
    });

    it('should say why when the proxy cannot be used', async () => {
      await harness.newInstance('bad-proxy');
      await harness.instances.update('bad-proxy', {
        proxy: { mode: 'custom', proxyUrl: 'ftp://127.0.0.1:1', proxyFallback: null, managed: null, lastTestAt: null, lastTestError: null },
      });
      const reply = await harness.place('bad-proxy');
      expect(reply.status).toBe('disconnected');
      expect(await harness.row('bad-proxy')).toMatchObject({
        status: 'disconnected',
        desiredState: 'disconnected',
        lastDisconnectReason: 'cannot connect: unsupported proxy protocol ftp:',
      });
    });
  });

  describe('with WhatsApp out of reach', () => {
    const lines: Array<{ msg: string; level: number; instanceId?: string }> = [];
    let worker: SessionWorker;

    beforeAll(async () => {
      await harness.stopWorkers();
      // A port nobody listens on: every socket is refused at once.
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      const simulator = { websocketUrl: `ws://127.0.0.1:${port}/ws/chat`, rootPublicKey: Buffer.from(harness.sim.rootPublicKey, 'base64') };
      worker = new SessionWorker({ dataSource: harness.db.dataSource, bus: harness.bus, config: harness.config({ workerId: 'w-nowhere', simulator }), logger });
      await worker.start();
    });

    afterAll(() => worker.stop());

    it('should answer a connect at once saying why, and not log the same failure at every retry', async () => {
      await harness.newInstance('nowhere');
      const started = Date.now();
      const reply = await harness.place('nowhere');
      // It used to wait the whole pairing reply wait (20 s) and answer an empty QR code with no reason.
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(reply).toMatchObject({
        status: 'connecting',
        qrcode: '',
        reason: expect.stringMatching(/^cannot reach WhatsApp: connect ECONNREFUSED 127\.0\.0\.1:\d+$/),
      });
      expect(await harness.row('nowhere')).toMatchObject({ status: 'connecting', lastDisconnectReason: reply.reason });
      // Asked again while still out of reach: the same answer, at once.
      const again = await op<ConnectReply>('nowhere', 'connect', { browser: 'auto', history: { days: 90, fullSync: false }, requestId: 'again' });
      expect(again.reason).toBe(reply.reason);
      // The retries go on with backoff (200 ms, 400 ms, …); their identical close is logged at info once.
      // (Only this instance's: the worker also adopts the suite's earlier instances.)
      const closes = () => lines.filter((line) => line.msg === 'socket closed' && line.instanceId === 'nowhere');
      await waitFor(
        () => closes().length,
        (count) => count >= 4,
        10_000,
        'four refused tries',
      );
      expect(closes().filter((line) => line.level >= 30)).toHaveLength(1);
    });
  });
});

/** A minimal HTTP CONNECT proxy on loopback that records where it tunnelled to. */
async function startConnectProxy(): Promise<{ server: Server; targets: string[] }> {
  const targets: string[] = [];
  const server = createServer((_request, response) => response.writeHead(405).end());
  server.on('connect', (request, client, head) => {
    const target = request.url ?? '';
    targets.push(target);
    const [host, port] = target.split(':');
    const upstream = tcpConnect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, targets };
}
