import { InProcessBus } from '@gw/bus';
import { createLogger } from '@gw/platform';
import { SessionWorker, sessionWorkerConfig } from '@gw/sessions';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { openBundle, sealBundle } from '../src/instance/session-bundle';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { nextPhone, Stack, waitFor } from './support/stack';

type SimDevice = { jid: string; status: string; connected: boolean; loginCount: number };

const PASSPHRASE = 'correct horse battery staple';
/** For the bundles this spec seals itself: the smallest scrypt cost an import accepts (the routes use N=2^17). */
const QUICK_KDF = { N: 2 ** 14, r: 8, p: 1 };

/**
 * Moving a session (issue #40), real Baileys against one simulator: an instance linked on stack A is
 * exported (the socket closed without logout, credentials wiped, connect refused) and imported on stack
 * B — its own database schema, bus, gateway and session worker — where it connects without a QR code as
 * the same linked device and sends. Every refused import (malformed, wrong passphrase, tampered, a
 * value Postgres refuses mid-transaction, imported twice) leaves nothing behind.
 */
describe('moving a session between servers (e2e)', () => {
  const a = new Stack();
  let b: { db: TestDatabase; gw: GatewayHarness; bus: InProcessBus; worker: SessionWorker };
  let owner: { id: string; token: string; phone: string };

  beforeAll(async () => {
    await a.start();
    const bus = new InProcessBus();
    const db = await openTestDatabase();
    const gw = await startGateway({ bus, db, env: { SSRF_ALLOWLIST: '127.0.0.0/8' } });
    const worker = new SessionWorker({
      dataSource: db.dataSource,
      bus,
      logger: createLogger('stack-b', process.env.TEST_LOG_LEVEL ?? 'silent'),
      config: sessionWorkerConfig({
        workerId: 'stack-b-worker',
        leaseTtlMs: 20_000,
        reconcileIntervalMs: 500,
        queryTimeoutMs: 5_000,
        simulator: { websocketUrl: a.sim.websocketUrl, rootPublicKey: Buffer.from(a.sim.rootPublicKey, 'base64') },
        ssrfAllowlist: ['127.0.0.0/8'],
      }),
    });
    await worker.start();
    b = { db, gw, bus, worker };
    owner = await a.connectedInstance('mover');
  }, 90_000);

  afterAll(async () => {
    await b?.worker.stop().catch(() => undefined);
    await b?.gw.close();
    await b?.bus.close();
    await b?.db.close();
    await a.stop();
  });

  const devices = () => a.control<SimDevice[]>('GET', `/sim/devices?phone=${owner.phone}`);
  const countB = async (table: string) => (await b.db.dataSource.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n as number;
  const nothingOnB = async () => ({
    instances: await countB('instances'),
    creds: await countB('auth_creds'),
    keys: await countB('auth_keys'),
    webhooks: await countB('webhooks'),
  });
  const importOnB = (body: unknown) => b.gw.call('POST', '/instance/import', { admin: b.gw.adminToken, body });

  it('exports from A, refuses every bad import on B without writing, imports once, and connects on B without a QR as the same device', async () => {
    // Settings that move with it: a webhook (with its secret) and the async queue's delays.
    const hook = await a.gw.call('POST', '/webhook', { token: owner.token, body: { url: 'http://127.0.0.1:9/hook', events: ['messages'] } });
    expect(hook.status).toBe(200);
    const [secret] = await a.db.dataSource.query(`SELECT secret FROM webhooks WHERE instance_id = $1`, [owner.id]);
    expect((await a.gw.call('POST', '/instance/updateDelaySettings', { token: owner.token, body: { msg_delay_min: 2, msg_delay_max: 5 } })).status).toBe(200);
    const [device] = await devices();
    expect(device.connected).toBe(true);

    // A short passphrase is refused before anything stops.
    expect(await a.gw.call('POST', '/instance/export', { token: owner.token, body: { passphrase: 'short' } })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('passphrase') },
    });
    const exported = await a.gw.call('POST', '/instance/export', { token: owner.token, body: { passphrase: PASSPHRASE } });
    expect(exported).toMatchObject({ status: 200, body: { response: 'Session exported', instance: { status: 'disconnected' } } });
    const bundle: string = exported.body.bundle;
    expect(bundle).toMatch(/^gwsession1\./);
    expect(bundle).not.toContain(owner.phone);

    // On A: socket closed without logout (the device is still linked at the simulator), no lease, no credentials, connect refused.
    await waitFor(devices, (list) => list.length === 1 && !list[0].connected, 10_000, 'the device offline at the simulator');
    expect((await devices())[0].status).toBe('active');
    expect(await a.db.dataSource.query(`SELECT 1 FROM session_leases WHERE instance_id = $1`, [owner.id])).toEqual([]);
    expect((await a.db.dataSource.query(`SELECT count(*)::int AS n FROM auth_creds WHERE instance_id = $1`, [owner.id]))[0].n).toBe(0);
    expect((await a.db.dataSource.query(`SELECT count(*)::int AS n FROM auth_keys WHERE instance_id = $1`, [owner.id]))[0].n).toBe(0);
    expect(await a.gw.call('POST', '/instance/connect', { token: owner.token, body: {} })).toMatchObject({
      status: 409,
      body: { error: expect.stringContaining('exported') },
    });
    expect(await a.gw.call('POST', '/instance/export', { token: owner.token, body: { passphrase: PASSPHRASE } })).toMatchObject({ status: 409 });
    // The audit log has the export, its passphrase masked.
    const audit = await a.gw.call('GET', '/instance/audit?action=instance.export', { token: owner.token });
    // Newest first: the second (refused) export, then the one that answered the bundle.
    expect(audit.body.entries.map((entry: { status: number }) => entry.status)).toEqual([409, 200, 400]);
    expect(audit.body.entries[1]).toMatchObject({ action: 'instance.export', changes: { passphrase: '[masked]' } });

    // On B, every refusal leaves nothing behind.
    const empty = await nothingOnB();
    expect(empty).toEqual({ instances: 0, creds: 0, keys: 0, webhooks: 0 });
    expect(await b.gw.call('POST', '/instance/import', { token: 'not-admin', body: { bundle, passphrase: PASSPHRASE } })).toMatchObject({ status: 403 });
    expect(await importOnB({ bundle: 'hello', passphrase: PASSPHRASE })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('Malformed bundle') },
    });
    expect(await importOnB({ passphrase: PASSPHRASE })).toMatchObject({ status: 400, body: { error: expect.stringContaining('bundle') } });
    const cannotDecrypt = { status: 400, body: { error: 'Cannot decrypt the bundle: wrong passphrase, or the bundle was changed' } };
    expect(await importOnB({ bundle, passphrase: 'wrong horse battery staple' })).toMatchObject(cannotDecrypt);
    const parts = bundle.split('.');
    const ciphertext = Buffer.from(parts[2], 'base64url');
    ciphertext[ciphertext.length >> 1] ^= 1;
    expect(await importOnB({ bundle: `${parts[0]}.${parts[1]}.${ciphertext.toString('base64url')}`, passphrase: PASSPHRASE })).toMatchObject(cannotDecrypt);
    // Encrypted with the right passphrase but not a session: malformed.
    expect(await importOnB({ bundle: await sealBundle({ format: 'something else' }, PASSPHRASE, QUICK_KDF), passphrase: PASSPHRASE })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('Malformed bundle') },
    });
    // A session whose last settings row Postgres refuses (events not a list): the instance and credentials already inserted roll back.
    const content = await openBundle(bundle, PASSPHRASE);
    const broken = structuredClone(content) as { session: { webhooks: Array<Record<string, unknown>> } };
    broken.session.webhooks[0].events = 'messages';
    expect(await importOnB({ bundle: await sealBundle(broken, PASSPHRASE, QUICK_KDF), passphrase: PASSPHRASE })).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('Malformed bundle: a value is refused') },
    });
    expect(await nothingOnB()).toEqual(empty);

    // The import: a new instance with a new token, the settings and the credentials.
    const imported = await importOnB({ bundle, passphrase: PASSPHRASE, name: 'moved' });
    expect(imported).toMatchObject({ status: 200, body: { response: 'Session imported', connected: false, loggedIn: false, instance: { name: 'moved' } } });
    const token: string = imported.body.token;
    expect(token).not.toBe(owner.token);
    expect(imported.body.jid).toBe(device.jid);
    const [moved] = await b.db.dataSource.query(`SELECT id, msg_delay_min, msg_delay_max, paired FROM instances`);
    expect(moved).toMatchObject({ msg_delay_min: 2, msg_delay_max: 5, paired: true });
    expect(await b.db.dataSource.query(`SELECT url, events, secret FROM webhooks WHERE instance_id = $1`, [moved.id])).toEqual([
      { url: 'http://127.0.0.1:9/hook', events: ['messages'], secret: secret.secret },
    ]);
    // Twice: 409, nothing added.
    const once = await nothingOnB();
    expect(await importOnB({ bundle, passphrase: PASSPHRASE })).toMatchObject({ status: 409, body: { error: expect.stringContaining(moved.id) } });
    expect(await nothingOnB()).toEqual(once);

    // Connect on B: no QR code, the same linked device logs in again, and it sends.
    const loginsBefore = (await devices())[0].loginCount;
    const connect = await b.gw.call('POST', '/instance/connect', { token, body: {} });
    expect(connect.status).toBe(200);
    expect(connect.body.instance.qrcode).toBe('');
    await waitFor(
      () => b.gw.call('GET', '/instance/status', { token }),
      (response) => response.body.status?.connected === true,
      20_000,
      'connected on B',
    );
    const after = await devices();
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ jid: device.jid, connected: true, loginCount: loginsBefore + 1 });
    const to = nextPhone('5596');
    await a.control('POST', '/sim/accounts', { phone: to, name: 'Destino' });
    const sent = await b.gw.call('POST', '/send/text', { token, body: { number: to, text: 'mudei de servidor' } });
    expect(sent.status).toBe(200);
    await a.received(to, sent.body.messageid);
  }, 180_000);
});
