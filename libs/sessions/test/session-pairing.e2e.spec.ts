import { ErrorCode, RpcError, Subjects } from '@gw/contracts';
import { LeaseRepository } from '@gw/persistence';
import type { SessionWorker } from '../src/session-worker';
import { Harness, nextPhone, waitFor } from './support/harness';

jest.setTimeout(30_000);

describe('Session pairing against the simulator', () => {
  const harness = new Harness();
  let worker: SessionWorker;

  beforeAll(async () => {
    await harness.start();
    worker = await harness.startWorker('w-pairing', { qrTtlMs: 60_000 });
  });
  afterAll(() => harness.stop());

  it('should connect by QR: the simulated phone scans the PNG and the instance is connected with auth in Postgres', async () => {
    const phone = nextPhone();
    await harness.newInstance('qr1');
    await harness.control('POST', '/sim/accounts', { phone });

    const reply = await harness.place('qr1', { browser: 'firefox', systemName: 'Gateway Test', history: { days: 30, fullSync: false }, requestId: 'pair-1' });
    expect(reply).toMatchObject({ status: 'connecting', loggedIn: false, jid: null, paircode: '', requestId: 'pair-1' });
    expect(reply.qrcode).toMatch(/^data:image\/png;base64,/);
    // nothing of a pairing in progress reaches Postgres
    expect(await harness.db.dataSource.query(`SELECT 1 FROM auth_creds WHERE instance_id = 'qr1'`)).toEqual([]);

    const device = await harness.control<{ jid: string }>('POST', '/sim/scan', { phone, qr: reply.qrcode });
    const row = await waitFor(
      () => harness.row('qr1'),
      (r) => r.status === 'connected',
      15_000,
      'connected',
    );

    expect(row).toMatchObject({
      paired: true,
      desiredState: 'connected',
      owner: phone,
      jid: device.jid,
      qrcode: '',
      paircode: '',
      browser: 'firefox',
      systemName: 'Gateway Test',
    });
    expect(row.lid).toMatch(/@lid$/);
    expect(await harness.db.dataSource.query(`SELECT 1 FROM auth_creds WHERE instance_id = 'qr1'`)).toHaveLength(1);
    // The keys (pre-keys, sessions) are written by Baileys' own key transactions after the login, which on a
    // loaded machine (CI once) commit after the `connected` status: waited for, not read once.
    const keyCount = async () => Number((await harness.db.dataSource.query(`SELECT count(*)::int AS count FROM auth_keys WHERE instance_id = 'qr1'`))[0].count);
    expect(await waitFor(keyCount, (count) => count > 0, 10_000, 'the keys in Postgres')).toBeGreaterThan(0);

    // what the device registered with: system name in the OS slot, browser, and the history limit
    const info = await harness.control<Record<string, unknown>>('GET', `/sim/devices/${encodeURIComponent(device.jid)}`);
    expect(info).toMatchObject({ os: 'Gateway Test', browser: 'firefox', recentSyncDaysLimit: 30 });
    expect(info.requireFullSync).toBeFalsy();

    const events = await harness.connectionEvents('qr1');
    expect(events[0]).toMatchObject({ EventType: 'connection', instance: { status: 'connecting', name: 'name-qr1' }, instanceName: 'name-qr1' });
    expect((events[0].instance as { qrcode: string }).qrcode).toMatch(/^data:image\/png;base64,/);
    expect(events.at(-1)).toEqual({ EventType: 'connection', instance: { name: 'name-qr1', status: 'connected' }, instanceName: 'name-qr1', owner: phone });

    const status = await harness.bus.request(Subjects.instance('qr1', 'status'), { instanceId: 'qr1' }, { timeoutMs: 5_000 });
    expect(status).toEqual({ status: 'connected', loggedIn: true, jid: { user: phone, agent: 0, device: expect.any(Number), server: 's.whatsapp.net' } });
  });

  it('should connect by pairing code and request full history for the asked days', async () => {
    const phone = nextPhone();
    await harness.newInstance('code1');
    await harness.control('POST', '/sim/accounts', { phone });

    const reply = await harness.place('code1', { phone, browser: 'safari', history: { days: 200, fullSync: true } });
    expect(reply.status).toBe('connecting');
    expect(reply.qrcode).toBe('');
    expect(reply.paircode).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    // requestPairingCode already set creds.me; that half-state must not be stored
    expect(await harness.db.dataSource.query(`SELECT 1 FROM auth_creds WHERE instance_id = 'code1'`)).toEqual([]);

    const device = await harness.control<{ jid: string }>('POST', '/sim/pair-code', { phone, code: reply.paircode });
    const row = await waitFor(
      () => harness.row('code1'),
      (r) => r.status === 'connected',
      15_000,
      'connected',
    );
    expect(row).toMatchObject({ paired: true, owner: phone, jid: device.jid, paircode: '' });

    const info = await harness.control<Record<string, unknown>>('GET', `/sim/devices/${encodeURIComponent(device.jid)}`);
    expect(info).toMatchObject({ pairingMethod: 'code', browser: 'safari', requireFullSync: true, fullSyncDaysLimit: 200 });
    const events = await harness.connectionEvents('code1');
    expect(events[0]).toMatchObject({ instance: { status: 'connecting', paircode: reply.paircode } });
  });

  it('should answer a second connect during a pairing with the same QR (what was requested first holds)', async () => {
    await harness.newInstance('qr-twice');
    const first = await harness.place('qr-twice', { requestId: 'first' });
    const second = await harness.bus.request<{ qrcode: string; requestId: string }>(
      Subjects.instance('qr-twice', 'connect'),
      { instanceId: 'qr-twice', browser: 'auto', history: { days: 10, fullSync: false }, requestId: 'second', phone: '5511999990000' },
      { timeoutMs: 10_000 },
    );
    expect(second.qrcode).toBe((await harness.row('qr-twice')).qrcode);
    expect(second.requestId).toBe('first');
    expect(first.qrcode).toMatch(/^data:image\/png/);
    await harness.bus.request(Subjects.instance('qr-twice', 'release'), { instanceId: 'qr-twice' }, { timeoutMs: 5_000 });
  });

  it('should refuse a placement when another worker holds the instance', async () => {
    await harness.newInstance('held');
    await new LeaseRepository(harness.db.dataSource).claim('held', 'someone-else', 60_000);
    await expect(harness.place('held')).rejects.toEqual(new RpcError(ErrorCode.Conflict, 'instance is held by another session worker'));
  });

  it('should answer No session for ops of an instance nobody holds', async () => {
    await expect(harness.bus.request(Subjects.instance('nobody', 'status'), { instanceId: 'nobody' }, { timeoutMs: 2_000 })).rejects.toMatchObject({
      code: ErrorCode.NoSession,
    });
  });

  describe('expiry', () => {
    let fast: SessionWorker;
    beforeAll(async () => {
      await worker.stop();
      fast = await harness.startWorker('w-expiry', { qrTtlMs: 1_500, pairCodeTtlMs: 2_000 });
    });

    it('should end a QR pairing nobody scanned: disconnected, QR cleared, lease released', async () => {
      await harness.newInstance('expire-qr');
      const reply = await harness.place('expire-qr');
      expect(reply.qrcode).not.toBe('');
      const row = await waitFor(
        () => harness.row('expire-qr'),
        (r) => r.status === 'disconnected',
        6_000,
        'disconnected',
      );
      expect(row).toMatchObject({
        qrcode: '',
        paircode: '',
        desiredState: 'disconnected',
        paired: false,
        lastDisconnectReason: 'QR code expired',
        pairingExpiresAt: null,
      });
      expect(await new LeaseRepository(harness.db.dataSource).holderOf('expire-qr')).toBeNull();
      expect(fast.manager.get('expire-qr')).toBeUndefined();
      const events = await harness.connectionEvents('expire-qr');
      expect(events.at(-1)).toMatchObject({ instance: { status: 'disconnected', lastDisconnectReason: 'QR code expired' } });
    });

    it('should end a pairing-code pairing after its own lifetime', async () => {
      await harness.newInstance('expire-code');
      const reply = await harness.place('expire-code', { phone: nextPhone() });
      expect(reply.paircode).not.toBe('');
      const row = await waitFor(
        () => harness.row('expire-code'),
        (r) => r.status === 'disconnected',
        6_000,
        'disconnected',
      );
      expect(row).toMatchObject({ paircode: '', desiredState: 'disconnected', lastDisconnectReason: 'pairing code expired' });
    });
  });
});
