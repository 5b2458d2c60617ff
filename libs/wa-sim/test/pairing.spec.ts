import { Browsers, BufferJSON } from '@whiskeysockets/baileys';
import type { ConnectionState, WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { RunningSimulator } from '../src';
import {
  connect,
  endSocket,
  getJson,
  memoryAuth,
  pairWithQr,
  postJson,
  provisionAndConnect,
  reconnect,
  sleep,
  trustSimulator,
  waitFor,
  waitForClose,
  waitForConnection,
} from './helpers';

jest.setTimeout(30_000);

describe('pairing', () => {
  let running: RunningSimulator;
  const sockets: WASocket[] = [];
  let firstAuth: ReturnType<typeof memoryAuth>;
  let firstSock: WASocket;

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: '5511900000001', name: 'Gateway One' });
    await postJson(running, '/sim/accounts', { phone: '5511900000002', name: 'Gateway Two', business: true });
    await postJson(running, '/sim/accounts', { phone: '5511900000003' });
  });

  afterAll(async () => {
    sockets.forEach(endSocket);
    await running.stop();
  });

  it('should pair by scanning the QR PNG, restart with 515 and open', async () => {
    const auth = (firstAuth = memoryAuth());
    const started = Date.now();
    const sock = (firstSock = await pairWithQr(running, '5511900000001', auth, {}, { png: true }));
    sockets.push(sock);
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(sock.user?.id).toMatch(/^5511900000001:\d+@s\.whatsapp\.net$/);
    expect(sock.user?.lid).toMatch(/@lid$/);
    const devices = await getJson<Array<{ jid: string; os: string; browser: string; connected: boolean; pairingMethod: string }>>(
      running,
      '/sim/devices?phone=5511900000001',
    );
    expect(devices.body).toHaveLength(1);
    expect(devices.body[0]).toMatchObject({ os: 'Ubuntu', browser: 'chrome', connected: true, pairingMethod: 'qr' });
  });

  it('should pair with a pairing code and record what the companion declared', async () => {
    const auth = memoryAuth();
    const sock = connect(running, auth, { browser: Browsers.macOS('Safari'), syncFullHistory: false });
    sockets.push(sock);
    sock.ev.on('creds.update', (u) => Object.assign(auth.state.creds, u));
    await waitFor(sock, 'connection.update', (u: Partial<ConnectionState>) => u.qr);
    const code = await sock.requestPairingCode('5511900000002');
    const closed = waitForClose(sock);
    const res = await postJson<{
      jid: string;
      pairingMethod: string;
      os: string;
      browser: string;
      requireFullSync: boolean;
      registration: Record<string, unknown>;
    }>(running, '/sim/pair-code', { phone: '5511900000002', code: `${code.slice(0, 4)}-${code.slice(4)}` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ pairingMethod: 'code', os: 'Mac OS', browser: 'safari', requireFullSync: false });
    expect(res.body.registration).toMatchObject({ companionPlatformDisplay: 'Safari (Mac OS)' });
    expect(await closed).toBe(515);
    const second = await reconnect(running, auth, { browser: Browsers.macOS('Safari') });
    sockets.push(second);
    expect(second.user?.id).toBe(res.body.jid);
    // Business accounts announce their name in pair-success.
    expect(auth.state.creds.me?.name).toBe('Gateway Two');
  });

  it('should refuse a wrong pairing code with a 4xx', async () => {
    const auth = memoryAuth();
    const sock = connect(running, auth);
    sockets.push(sock);
    sock.ev.on('creds.update', (u) => Object.assign(auth.state.creds, u));
    await waitFor(sock, 'connection.update', (u: Partial<ConnectionState>) => u.qr);
    await sock.requestPairingCode('5511900000003');
    const res = await postJson(running, '/sim/pair-code', { phone: '5511900000003', code: 'AAAAAAAA' });
    expect(res.status).toBe(400);
    expect(res.body).toHaveProperty('error');
    endSocket(sock);
  });

  it('should reconnect with stored auth without pairing again', async () => {
    const auth = firstAuth;
    const qrSeen = jest.fn();
    endSocket(firstSock);
    await sleep(100);
    const second = connect(running, auth);
    sockets.push(second);
    second.ev.on('connection.update', (u) => u.qr && qrSeen());
    const started = Date.now();
    await waitForConnection(second, (u) => u.connection === 'open');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(qrSeen).not.toHaveBeenCalled();
    const devices = await getJson<Array<{ loginCount: number; connected: boolean }>>(running, '/sim/devices?phone=5511900000001');
    expect(devices.body[0]).toMatchObject({ loginCount: 2, connected: true });
    endSocket(second);
  });

  it('should replace an open connection of the device by a second login (440 at the first) and count it', async () => {
    await postJson(running, '/sim/accounts', { phone: '5511900000009' });
    const { sock: first, auth } = await provisionAndConnect(running, '5511900000009');
    const firstClosed = waitForClose(first);
    const second = connect(running, auth);
    sockets.push(second);
    await waitForConnection(second, (u) => u.connection === 'open');
    expect(await firstClosed).toBe(440);
    const devices = await getJson<Array<{ loginCount: number; replacedLogins: number; connected: boolean }>>(running, '/sim/devices?phone=5511900000009');
    expect(devices.body[0]).toMatchObject({ loginCount: 2, replacedLogins: 1, connected: true });
    endSocket(second);
  });

  it('should log out from the client (remove-companion-device) and refuse the next login with 401', async () => {
    const { sock, auth } = await provisionAndConnect(running, '5511900000003');
    const jid = sock.user!.id;
    const closed = waitForClose(sock);
    await sock.logout();
    expect(await closed).toBe(401);
    await sleep(100);
    const device = await getJson<{ status: string }>(running, `/sim/devices/${encodeURIComponent(jid)}`);
    expect(device.body.status).toBe('logged-out');
    const again = connect(running, auth);
    sockets.push(again);
    expect(await waitForClose(again)).toBe(401);
  });

  it('should provision an already-linked device that logs straight in', async () => {
    const res = await postJson<{ device: { jid: string; pairingMethod: string }; creds: unknown }>(running, '/sim/accounts/5511900000003/provision', {});
    expect(res.status).toBe(200);
    const auth = memoryAuth();
    Object.assign(auth.state.creds, JSON.parse(JSON.stringify(res.body.creds), BufferJSON.reviver));
    const sock = await reconnect(running, auth);
    sockets.push(sock);
    expect(sock.user?.id).toBe(res.body.device.jid);
    expect(res.body.device.pairingMethod).toBe('provisioned');
  });

  it('should answer bad control requests with 4xx and keep running', async () => {
    expect((await postJson(running, '/sim/scan', { phone: '5511900000001', qr: 'nonsense' })).status).toBe(400);
    expect((await postJson(running, '/sim/scan', { phone: '5511900000001', qr: 'data:image/png;base64,AAAA' })).status).toBe(400);
    expect((await postJson(running, '/sim/scan', { phone: '5599999999999', qr: 'x' })).status).toBe(400);
    expect(
      (
        await postJson(running, '/sim/scan', {
          phone: '5511900000001',
          qr: 'https://wa.me/settings/linked_devices#2@gone,' + 'A'.repeat(43) + '=,' + 'A'.repeat(43) + '=,' + 'A'.repeat(43) + '=,1',
        })
      ).status,
    ).toBe(404);
    expect((await postJson(running, '/sim/pair-code', { phone: '5511900000001', code: 'ABCDEFGH' })).status).toBe(404);
    expect((await postJson(running, '/sim/accounts', { phone: '12' })).status).toBe(400);
    expect((await getJson(running, '/sim/devices/nobody@s.whatsapp.net')).status).toBe(404);
    const raw = await fetch(`${running.controlUrl}/sim/accounts`, { method: 'POST', body: '{not json' });
    expect(raw.status).toBe(400);
    expect((await getJson<{ ok: boolean; rootPublicKey: string }>(running, '/sim/health')).body).toMatchObject({
      ok: true,
      rootPublicKey: running.rootPublicKey,
    });
  });
});
