import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * Issue 34, mode 1: pairing when WhatsApp changes its mind. Through HTTP, real Baileys, the simulator
 * as WhatsApp: `<notification type="companion_reg_refresh">` retires the ADV secret the QR shows
 * (Baileys issue #2737: on rc14 the pairing never completes), and a pairing-code request the server
 * answers with an error IQ (B#2008, B#2737: rc14 returned a code the server never registered).
 */
describe('pairing against the server refreshing or refusing it (issue 34, mode 1)', () => {
  const stack = new Stack();
  const status = (token: string) => stack.gw.call('GET', '/instance/status', { token });
  const scan = (phone: string, qr: string) => stack.control<{ jid: string }>('POST', '/sim/scan', { phone, qr });

  beforeAll(async () => {
    await stack.start();
  });

  afterAll(async () => {
    await stack.stop();
  });

  it('should re-render the QR with a new secret on companion_reg_refresh and link with it', async () => {
    const phone = nextPhone();
    await stack.control('POST', '/sim/accounts', { phone });
    const { token } = await stack.gw.createInstance('reg-refresh');
    const connect = await stack.gw.call('POST', '/instance/connect', { token, body: {} });
    expect(connect.status).toBe(200);
    const shown: string = connect.body.instance.qrcode;
    expect(shown).toMatch(/^data:image\/png;base64,/);

    // The phone scans; the server refreshes the companion's registration instead of linking.
    await stack.control('POST', '/sim/faults', { kind: 'reg-refresh', device: phone });
    await expect(scan(phone, shown)).rejects.toThrow(/409/);

    // A new QR (same ref, new secret) replaces the retired one well before Baileys' 60 s ref rotation.
    const refreshed = await waitFor(
      () => status(token),
      (r) => Boolean(r.body.instance.qrcode) && r.body.instance.qrcode !== shown,
      10_000,
      'QR re-rendered',
    );
    expect(refreshed.body.instance.status).toBe('connecting');
    await expect(scan(phone, shown)).rejects.toThrow(/retired/);

    const device = await scan(phone, refreshed.body.instance.qrcode);
    const connected = await waitFor(
      () => status(token),
      (r) => r.body.status.connected === true,
      20_000,
      'connected after the refresh',
    );
    expect(connected.body.status.jid).toMatchObject({ user: phone });
    const devices = await stack.control<Array<{ jid: string; status: string }>>('GET', `/sim/devices?phone=${phone}`);
    expect(devices.filter((entry) => entry.status === 'active').map((entry) => entry.jid)).toEqual([device.jid]);
  }, 60_000);

  it('should answer an error and no code when WhatsApp refuses the pairing-code request', async () => {
    const phone = nextPhone();
    await stack.control('POST', '/sim/accounts', { phone });
    const { token } = await stack.gw.createInstance('code-refused');
    await stack.control('POST', '/sim/faults', { kind: 'pair-code-refused', device: phone, code: 429, count: 1 });

    const refused = await stack.gw.call('POST', '/instance/connect', { token, body: { phone } });
    expect(refused.status).toBe(502);
    expect(refused.body.error).toMatch(/refused the pairing code request \(429: rate-overlimit\)/);
    const after = (await status(token)).body.instance;
    expect(after).toMatchObject({ status: 'disconnected', paircode: '' });
    expect(after.lastDisconnectReason).toMatch(/429/);

    // Asked again (the server accepts now): a code that links.
    const again = await stack.gw.call('POST', '/instance/connect', { token, body: { phone } });
    expect(again.status).toBe(200);
    expect(again.body.instance.paircode).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    await stack.control('POST', '/sim/pair-code', { phone, code: again.body.instance.paircode });
    await waitFor(
      () => status(token),
      (r) => r.body.status.connected === true,
      20_000,
      'connected by code',
    );
  }, 60_000);
});
