import { nextPhone, Stack, waitFor } from './support/stack';

type SimDevice = { jid: string; status: string; connected: boolean; loginCount: number };

/**
 * Hibernation (uazapi 2.1.1) through HTTP, real Baileys against the simulator, on a session worker with
 * room for one session: a hibernated instance closes its socket and gives its lease (and its place on
 * the worker) back, keeps its credentials, refuses sends with a 409 naming /instance/connect, and wakes
 * without a QR. A connect no worker has room for answers 503 with Retry-After.
 */
describe('instance hibernation (e2e)', () => {
  const stack = new Stack();
  let owner: { id: string; token: string; phone: string };

  beforeAll(async () => {
    await stack.start({}, undefined, { capacity: 1 });
    owner = await stack.connectedInstance('sleepy');
  }, 60_000);
  afterAll(() => stack.stop());

  const call = (token: string, method: string, path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const devices = () => stack.control<SimDevice[]>('GET', `/sim/devices?phone=${owner.phone}`);
  const lease = async (id: string) => (await stack.db.dataSource.query(`SELECT worker_id FROM session_leases WHERE instance_id = $1`, [id]))[0];

  it('connect with no room on any worker: 503 with Retry-After; hibernating the holder frees its place; sends 409 until connect wakes it without a QR', async () => {
    const other = await stack.gw.createInstance('other');
    // Read with fetch: the harness's answers carry no headers.
    const full = await fetch(`${stack.gw.baseUrl}/instance/connect`, {
      method: 'POST',
      headers: { token: other.token, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toBe('5');
    expect(await full.json()).toEqual({ error: 'No session worker has capacity for this instance' });

    const hibernated = await call(owner.token, 'POST', '/instance/hibernate');
    expect(hibernated).toMatchObject({
      status: 200,
      body: { response: 'Instance hibernated', instance: { status: 'hibernated', lastDisconnectReason: 'hibernated by request' } },
    });
    expect(hibernated.body.info).toContain('/instance/connect');
    // No lease, no socket (the simulator sees the device offline), credentials kept.
    expect(await lease(owner.id)).toBeUndefined();
    await waitFor(devices, (list) => list.length > 0 && list.every((device) => !device.connected), 10_000, 'the device offline at the simulator');
    const [creds] = await stack.db.dataSource.query(`SELECT count(*)::int AS n FROM auth_creds WHERE instance_id = $1`, [owner.id]);
    expect(creds.n).toBe(1);
    const status = await call(owner.token, 'GET', '/instance/status');
    expect(status.body).toMatchObject({ instance: { status: 'hibernated' }, status: { connected: false, loggedIn: false } });
    // Hibernating again changes nothing.
    expect(await call(owner.token, 'POST', '/instance/hibernate')).toMatchObject({ status: 200, body: { instance: { status: 'hibernated' } } });

    // Sends (direct or queued) and other session routes: a clear 409 naming the way back.
    const sent = await call(owner.token, 'POST', '/send/text', { number: nextPhone('5597'), text: 'dormindo?' });
    expect(sent).toMatchObject({ status: 409, body: { error: expect.stringContaining('/instance/connect'), status: 'hibernated' } });
    const queued = await call(owner.token, 'POST', '/send/text', { number: nextPhone('5597'), text: 'na fila', async: true });
    expect(queued).toMatchObject({ status: 409, body: { error: expect.stringContaining('/instance/connect') } });
    const privacy = await call(owner.token, 'GET', '/instance/privacy');
    expect(privacy).toMatchObject({ status: 409, body: { error: expect.stringContaining('/instance/connect') } });

    // Its place on the worker is free: the other instance gets it (a QR: it was never paired), and cannot hibernate.
    const placed = await call(other.token, 'POST', '/instance/connect', {});
    expect(placed.status).toBe(200);
    expect(placed.body.instance.qrcode).toMatch(/^data:image\/png;base64,/);
    expect(await call(other.token, 'POST', '/instance/hibernate')).toMatchObject({ status: 409, body: { error: expect.stringContaining('no linked device') } });
    expect((await call(other.token, 'POST', '/instance/disconnect')).status).toBe(200);
    await waitFor(
      () => lease(other.id),
      (row) => row === undefined,
      10_000,
      'the other instance let go',
    );

    // connect wakes it from the stored credentials: no QR, no new login of a new device.
    const loginsBefore = (await devices())[0].loginCount;
    const woken = await call(owner.token, 'POST', '/instance/connect', {});
    expect(woken.status).toBe(200);
    expect(woken.body.instance.qrcode).toBe('');
    await waitFor(
      () => call(owner.token, 'GET', '/instance/status'),
      (response) => response.body.status?.connected === true,
      20_000,
      'awake',
    );
    expect((await devices())[0]).toMatchObject({ connected: true, loginCount: loginsBefore + 1 });
    const to = nextPhone('5597');
    await stack.control('POST', '/sim/accounts', { phone: to, name: 'Acordado' });
    const after = await call(owner.token, 'POST', '/send/text', { number: to, text: 'acordei' });
    expect(after.status).toBe(200);
    await stack.received(to, after.body.messageid);
  }, 90_000);
});
