import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * The sandbox's phones relay (/sandbox/sim/*) over HTTP, between two tenants: an instance token reaches
 * only the phone its instance is linked to (and, before pairing, creates a phone and links it with its
 * own QR code); the admin token reaches every phone.
 */
describe('sandbox relay between tenants (HTTP)', () => {
  const stack = new Stack();
  let a: { id: string; token: string; phone: string };
  let b: { id: string; token: string; phone: string };
  let friendOfB: string;
  /** A second gateway on the same database and bus, serving the relay as `npm run sandbox` does. */
  let sandbox: GatewayHarness;

  const relay = (method: 'GET' | 'POST', path: string, auth: { token?: string; admin?: string }, body?: unknown) =>
    sandbox.call(method, `/sandbox/sim${path}`, { ...auth, body });

  beforeAll(async () => {
    await stack.start();
    sandbox = await startGateway({ bus: stack.bus, db: stack.db, simulatorControlUrl: stack.sim.controlUrl });
    a = await stack.connectedInstance('tenant-a');
    b = await stack.connectedInstance('tenant-b');
    friendOfB = nextPhone('5541');
    await stack.control('POST', '/sim/accounts', { phone: friendOfB, name: 'Friend of B' });
    // B's phone receives a message from B's contact: B's inbox is not empty.
    await stack.control('POST', `/sim/accounts/${friendOfB}/send`, { to: b.phone, text: 'private to B' });
  }, 90_000);
  afterAll(async () => {
    await sandbox?.app.close();
    await stack.stop();
  });

  it("should list only the instance's own phone to an instance token, and every phone to the admin", async () => {
    const listed = await relay('GET', '/accounts', { token: a.token });
    expect(listed.status).toBe(200);
    expect(listed.body.map((phone: { phone: string }) => phone.phone)).toEqual([a.phone]);
    const all = await relay('GET', '/accounts', { admin: stack.gw.adminToken });
    expect(all.body.map((phone: { phone: string }) => phone.phone)).toEqual(expect.arrayContaining([a.phone, b.phone, friendOfB]));
  });

  it("should refuse another tenant's inbox and sending as another tenant's phone or contact", async () => {
    const inbox = await relay('GET', `/accounts/${b.phone}/inbox`, { token: a.token });
    expect(inbox.status).toBe(403);
    expect(inbox.body).toEqual({ error: expect.any(String) });
    expect(JSON.stringify(inbox.body)).not.toContain('private to B');
    for (const phone of [b.phone, friendOfB]) {
      const sent = await relay('POST', `/accounts/${phone}/send`, { token: a.token }, { to: b.phone, text: 'spoofed' });
      expect(sent.status).toBe(403);
    }
    // A phone that exists is not the instance token's to create again (nor to rename).
    const taken = await relay('POST', '/accounts', { token: a.token }, { phone: friendOfB, name: 'Renamed by A' });
    expect(taken.status).toBe(409);
    const friend = await stack.control<{ name: string }>('GET', `/sim/accounts/${friendOfB}`);
    expect(friend.name).toBe('Friend of B');
    const inboxOfB = await stack.inbox(b.phone, 0);
    expect(JSON.stringify(inboxOfB)).not.toContain('spoofed');
  });

  it('should let an instance token read its own phone and send as it to anyone', async () => {
    const sent = await relay('POST', `/accounts/${a.phone}/send`, { token: a.token }, { to: b.phone, text: 'hello B, from A' });
    expect(sent.status).toBe(200);
    await waitFor(
      () => stack.inbox(b.phone, 0),
      (entries) => JSON.stringify(entries).includes('hello B, from A'),
      10_000,
      "A's message at B's phone",
    );
    const inbox = await relay('GET', `/accounts/${a.phone}/inbox`, { token: a.token });
    expect(inbox.status).toBe(200);
    expect(Array.isArray(inbox.body)).toBe(true);
    // The admin reads any phone.
    const adminRead = await relay('GET', `/accounts/${b.phone}/inbox`, { admin: stack.gw.adminToken });
    expect(adminRead.status).toBe(200);
    expect(JSON.stringify(adminRead.body)).toContain('private to B');
  });

  it("should let an unpaired instance create a phone and link it with its own QR code only, never another tenant's phone", async () => {
    const { token } = await stack.gw.createInstance('tenant-c');
    const connect = await stack.gw.call('POST', '/instance/connect', { token, body: {} });
    expect(connect.status).toBe(200);
    const qr: string = connect.body.instance.qrcode;
    // Before pairing it reaches no phone.
    expect((await relay('GET', '/accounts', { token })).body).toEqual([]);
    expect((await relay('GET', `/accounts/${b.phone}/inbox`, { token })).status).toBe(403);

    const own = nextPhone('5551');
    const created = await relay('POST', '/accounts', { token }, { phone: own, name: 'C phone' });
    expect(created.status).toBe(200);
    expect((await relay('GET', '/accounts', { token })).body.map((phone: { phone: string }) => phone.phone)).toEqual([own]);

    // Another tenant's phone cannot link it (it would read that tenant's chats), nor another QR code link its phone.
    expect((await relay('POST', '/scan', { token }, { phone: b.phone, qr })).status).toBe(403);
    expect((await relay('POST', '/scan', { token }, { phone: friendOfB, qr })).status).toBe(403);
    const otherInstance = await stack.gw.createInstance('tenant-d');
    const otherConnect = await stack.gw.call('POST', '/instance/connect', { token: otherInstance.token, body: {} });
    expect((await relay('POST', '/scan', { token }, { phone: own, qr: otherConnect.body.instance.qrcode })).status).toBe(403);
    expect((await relay('POST', '/pair-code', { token }, { phone: own, code: 'ABCD1234' })).status).toBe(403);

    // Its own phone, its own QR code: linked, and from then on the phone is its to read.
    const fresh = await stack.gw.call('GET', '/instance/status', { token });
    expect((await relay('POST', '/scan', { token }, { phone: own, qr: fresh.body.instance.qrcode })).status).toBe(200);
    await waitFor(
      () => stack.gw.call('GET', '/instance/status', { token }),
      (r) => r.body.instance?.owner === own,
      20_000,
      'tenant-c linked',
    );
    expect((await relay('GET', `/accounts/${own}/inbox`, { token })).status).toBe(200);
    expect((await relay('GET', `/accounts/${b.phone}/inbox`, { token })).status).toBe(403);
  }, 60_000);
});
