import { nextPhone, waitFor } from './support/stack';
import { TakeoverStack } from './support/takeover-stack';

/**
 * The whole connect flow through HTTP: real Baileys in two session workers, our simulator as
 * WhatsApp, the gateway in front. Create → connect by QR → the simulated phone scans the PNG →
 * connected → status → the holding worker dies (kill -9) → the other one reconnects from the stored
 * auth, no new QR → disconnect → delete; and the pairing-code flow.
 */
describe('connect flow (HTTP → gateway → bus → session workers → Baileys → simulator)', () => {
  const stack = new TakeoverStack('e2e');

  const status = (token: string) => stack.gw.call('GET', '/instance/status', { token });

  beforeAll(async () => {
    await stack.start(['worker-a', 'worker-b']);
  });

  afterAll(async () => {
    await stack.stop();
  });

  it('should connect by QR, survive the death of its worker, disconnect and delete', async () => {
    const phone = nextPhone('5521');
    await stack.control('POST', '/sim/accounts', { phone, name: 'Loja' });
    const { id, token } = await stack.gw.createInstance('qr-flow');

    const connect = await stack.gw.call('POST', '/instance/connect', { token, body: { browser: 'firefox', systemName: 'CRM Desk', history_days: 30 } });
    expect(connect.status).toBe(200);
    expect(connect.body).toMatchObject({ connected: false, loggedIn: false, jid: null, instance: { status: 'connecting' } });
    expect(connect.body.instance.qrcode).toMatch(/^data:image\/png;base64,/);
    expect(connect.body.request_id).toEqual(expect.any(String));
    expect((await status(token)).body.instance.status).toBe('connecting');

    // The simulated phone scans the QR image, as a camera would.
    const device = await stack.control<{ jid: string }>('POST', '/sim/scan', { phone, qr: connect.body.instance.qrcode });
    const connected = await waitFor(
      () => status(token),
      (r) => r.body.status.connected === true,
      20_000,
      'connected',
    );
    expect(connected.body.status).toMatchObject({ connected: true, loggedIn: true, jid: { user: phone, server: 's.whatsapp.net' } });
    expect(connected.body.instance).toMatchObject({ status: 'connected', owner: phone, qrcode: '', paircode: '' });

    // What the device declared at registration: the browser, the system name and the history asked for.
    const declared = await stack.control<Record<string, unknown>>('GET', `/sim/devices/${encodeURIComponent(device.jid)}`);
    expect(JSON.stringify(declared)).toContain('CRM Desk');
    expect(JSON.stringify(declared).toLowerCase()).toContain('firefox');

    // kill -9 of the holder: the other worker adopts the instance from the stored auth state.
    const holder = await stack.holderOf(id);
    expect(holder).not.toBeNull();
    const survivor = holder === 'worker-a' ? 'worker-b' : 'worker-a';
    stack.halt(holder!);
    const killedAt = Date.now();
    await waitFor(
      () => stack.holderOf(id),
      (worker) => worker === survivor,
      15_000,
      'adoption by the surviving worker',
    );
    await waitFor(
      () => status(token),
      (r) => r.body.status.connected === true,
      15_000,
      'reconnected',
    );
    const reconnectMs = Date.now() - killedAt;
    expect(reconnectMs).toBeLessThan(20_000);
    // Same linked device, no new pairing.
    const devices = await stack.control<Array<{ jid: string; status: string }>>('GET', `/sim/devices?phone=${phone}`);
    expect(devices.filter((entry) => entry.status === 'active').map((entry) => entry.jid)).toEqual([device.jid]);
    await stack.startWorker(holder!);

    const disconnected = await stack.gw.call('POST', '/instance/disconnect', { token });
    expect(disconnected.status).toBe(200);
    expect(disconnected.body.response).toBe('Disconnected');
    await waitFor(
      () => status(token),
      (r) => r.body.instance.status === 'disconnected',
      10_000,
      'disconnected',
    );
    // The simulator applies the device's logout as its stanza arrives, which can trail the status by a moment.
    const afterLogout = await waitFor(
      () => stack.control<Array<{ jid: string; status: string }>>('GET', `/sim/devices?phone=${phone}`),
      (entries) => entries.find((entry) => entry.jid === device.jid)?.status === 'logged-out',
      10_000,
      'device logged out at the simulator',
    ).catch(() => stack.control<Array<{ jid: string; status: string }>>('GET', `/sim/devices?phone=${phone}`));
    expect(afterLogout.find((entry) => entry.jid === device.jid)?.status).toBe('logged-out');

    const deleted = await stack.gw.call('DELETE', '/instance', { token });
    expect(deleted).toMatchObject({ status: 200, body: { response: 'Instance Deleted' } });
    expect((await status(token)).status).toBe(401);
  }, 90_000);

  it('should connect with a pairing code', async () => {
    const phone = nextPhone('5521');
    await stack.control('POST', '/sim/accounts', { phone });
    const { token } = await stack.gw.createInstance('code-flow');
    const connect = await stack.gw.call('POST', '/instance/connect', { token, body: { phone } });
    expect(connect.status).toBe(200);
    expect(connect.body.instance.paircode).toMatch(/^[A-Z0-9]{4}-?[A-Z0-9]{4}$/);
    await stack.control('POST', '/sim/pair-code', { phone, code: connect.body.instance.paircode });
    const connected = await waitFor(
      () => status(token),
      (r) => r.body.status.connected === true,
      20_000,
      'connected by code',
    );
    expect(connected.body.instance.owner).toBe(phone);
  }, 60_000);

  it('should reconnect an already paired instance without a new QR', async () => {
    const phone = nextPhone('5521');
    await stack.control('POST', '/sim/accounts', { phone });
    const { id, token } = await stack.gw.createInstance('repeat');
    const first = await stack.gw.call('POST', '/instance/connect', { token, body: {} });
    await stack.control('POST', '/sim/scan', { phone, qr: first.body.instance.qrcode });
    await waitFor(
      () => status(token),
      (r) => r.body.status.connected === true,
      20_000,
      'connected',
    );
    // Let go of the session (as a redeploy would), then connect again.
    const holder = await stack.holderOf(id);
    await stack.bus.request(`instance.${id}.release`, { instanceId: id }, { timeoutMs: 10_000 });
    expect(holder).not.toBeNull();
    const again = await stack.gw.call('POST', '/instance/connect', { token, body: {} });
    expect(again.status).toBe(200);
    expect(again.body.instance.qrcode).toBe('');
    await waitFor(
      () => status(token),
      (r) => r.body.status.connected === true,
      20_000,
      'reconnected',
    );
  }, 60_000);
});
