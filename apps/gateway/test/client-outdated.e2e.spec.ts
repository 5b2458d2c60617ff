import { Stack, waitFor } from './support/stack';

interface SimDevice {
  jid: string;
  status: string;
  loginCount: number;
  lastLogin?: { appVersion?: string };
}

/**
 * Issue 34, mode 5: WhatsApp refuses an outdated WhatsApp Web version at login (`<failure
 * reason="405">`, Baileys issues #1634, #1937). Through HTTP, real Baileys, the simulator as WhatsApp
 * and as the page that publishes the current version (sw.js' `client_revision`): the session learns
 * the version and logs in again with its stored credentials, no new QR.
 */
describe('client outdated (405 at login) (issue 34, mode 5)', () => {
  const stack = new Stack();
  const status = (token: string) => stack.gw.call('GET', '/instance/status', { token });

  beforeAll(async () => {
    await stack.start({}, undefined, (sim) => ({ waVersionUrl: `${sim.controlUrl}/sim/wa-version`, reconnectBaseMs: 200 }));
  });

  afterAll(async () => {
    await stack.stop();
  });

  it('should learn the current version and log in again with the stored credentials', async () => {
    const { token, phone } = await stack.connectedInstance('outdated');
    const [before] = (await stack.control<SimDevice[]>('GET', `/sim/devices?phone=${phone}`)).filter((d) => d.status === 'active');
    const device = await stack.control<SimDevice>('GET', `/sim/devices/${encodeURIComponent(before.jid)}`);
    const [major, minor, revision] = device.lastLogin!.appVersion!.split('.').map(Number);
    const current = `${major}.${minor}.${revision + 1}`;

    // WhatsApp moves on: logins older than `current` get 405; the connection drops.
    await stack.control('POST', '/sim/faults', { kind: 'client-outdated', minVersion: current });
    await stack.control('POST', '/sim/faults', { kind: 'drop', device: before.jid });

    const back = await waitFor(
      () => status(token),
      (r) => r.body.status.connected === true && /405/.test(r.body.instance.lastDisconnectReason ?? ''),
      20_000,
      'connected again after the 405',
    );
    expect(back.body.instance.lastDisconnectReason).toBe(
      `405: client outdated (WhatsApp Web ${device.lastLogin!.appVersion}); logging in again with ${current}`,
    );
    expect(back.body.instance.qrcode).toBe('');

    // Same linked device, logged in with the new version: no new pairing.
    const after = await stack.control<SimDevice[]>('GET', `/sim/devices?phone=${phone}`);
    expect(after.filter((d) => d.status === 'active').map((d) => d.jid)).toEqual([before.jid]);
    const relogged = await stack.control<SimDevice>('GET', `/sim/devices/${encodeURIComponent(before.jid)}`);
    expect(relogged.lastLogin?.appVersion).toBe(current);
    expect(relogged.loginCount).toBeGreaterThan(device.loginCount);
  }, 60_000);
});
