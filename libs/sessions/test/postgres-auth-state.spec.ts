import { AuthStateRepository, FencedOutError, InstanceRepository, LeaseRepository, type Lease } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import pino from 'pino';
import { AuthStateWriteError, PostgresAuthState } from '../src/auth-state/postgres-auth-state';
import { proto } from '../src/baileys';

describe(PostgresAuthState.name, () => {
  let db: TestDatabase;
  let repository: AuthStateRepository;
  let leases: LeaseRepository;
  let instances: InstanceRepository;
  const logger = pino({ level: 'silent' });

  beforeAll(async () => {
    db = await openTestDatabase();
    repository = new AuthStateRepository(db.dataSource);
    leases = new LeaseRepository(db.dataSource);
    instances = new InstanceRepository(db.dataSource);
  });
  afterAll(() => db.close());

  const leaseFor = async (id: string, worker = 'w1', ttlMs = 10_000): Promise<Lease> => {
    if (!(await instances.findById(id))) await instances.create({ id, token: `token-${id}`, name: id });
    const lease = await leases.claim(id, worker, ttlMs);
    if (!lease) throw new Error('claim failed');
    return lease;
  };
  const optionsFor = (lease: Lease, onFenced = jest.fn()) => ({ repository, lease, logger, onFenced });

  describe('persist and load', () => {
    it('should round-trip creds and keys including Buffers and app-state keys', async () => {
      const lease = await leaseFor('i-roundtrip');
      const sut = PostgresAuthState.fresh(optionsFor(lease));
      const session = Uint8Array.from([1, 2, 3, 250]);
      await sut.state.keys.set({
        session: { 'a.0': session },
        'pre-key': { '1': { public: Buffer.from('pub'), private: Buffer.from('priv') } },
        'app-state-sync-key': { k1: proto.Message.AppStateSyncKeyData.fromObject({ keyData: Buffer.from('kd'), timestamp: 5 }) },
        'lid-mapping': { '123': '456@lid' },
      });
      sut.creds.me = { id: '5511999999999:1@s.whatsapp.net', name: 'Tester' };
      await sut.persist();

      const loaded = await PostgresAuthState.load(optionsFor(lease));
      expect(loaded).not.toBeNull();
      expect(loaded!.isPersistent).toBe(true);
      expect(loaded!.creds.me).toEqual({ id: '5511999999999:1@s.whatsapp.net', name: 'Tester' });
      expect(Buffer.isBuffer(loaded!.creds.noiseKey.public)).toBe(true);
      expect(Buffer.compare(loaded!.creds.noiseKey.private, sut.creds.noiseKey.private)).toBe(0);
      expect(loaded!.creds.advSecretKey).toBe(sut.creds.advSecretKey);

      const sessions = await loaded!.state.keys.get('session', ['a.0', 'missing']);
      expect(Buffer.from(sessions['a.0'])).toEqual(Buffer.from(session));
      expect(sessions.missing).toBeUndefined();
      const preKeys = await loaded!.state.keys.get('pre-key', ['1']);
      expect(preKeys['1'].public.toString()).toBe('pub');
      const appState = await loaded!.state.keys.get('app-state-sync-key', ['k1']);
      expect(appState.k1).toBeInstanceOf(proto.Message.AppStateSyncKeyData);
      expect(Buffer.from(appState.k1.keyData!).toString()).toBe('kd');
      expect(await loaded!.state.keys.get('lid-mapping', ['123'])).toEqual({ '123': '456@lid' });
    });

    it('should write each keys.set through and delete keys set to null', async () => {
      const lease = await leaseFor('i-writethrough');
      const sut = PostgresAuthState.fresh(optionsFor(lease));
      await sut.persist();
      await sut.state.keys.set({ session: { x: Uint8Array.from([9]) }, 'device-list': { u: ['0', '1'] } });
      expect([...(await repository.readKeys('i-writethrough', 'session', ['x'])).keys()]).toEqual(['x']);
      expect(await repository.readKeys('i-writethrough', 'device-list', ['u'])).toEqual(new Map([['u', '["0","1"]']]));
      await sut.state.keys.set({ session: { x: null } });
      expect(await repository.readKeys('i-writethrough', 'session', ['x'])).toEqual(new Map());
    });

    it('should save the whole creds object on every saveCreds', async () => {
      const lease = await leaseFor('i-savecreds');
      const sut = PostgresAuthState.fresh(optionsFor(lease));
      await sut.persist();
      sut.creds.accountSyncCounter = 7;
      await Promise.all([sut.saveCreds(), sut.saveCreds(), sut.saveCreds()]);
      sut.creds.nextPreKeyId = 42;
      await sut.saveCreds();
      const loaded = await PostgresAuthState.load(optionsFor(lease));
      expect(loaded!.creds.accountSyncCounter).toBe(7);
      expect(loaded!.creds.nextPreKeyId).toBe(42);
    });

    it('should write nothing for a creds update that leaves them as stored (every login announces one), and write a change once', async () => {
      const lease = await leaseFor('i-samecreds');
      const first = PostgresAuthState.fresh(optionsFor(lease));
      await first.persist();
      const sut = (await PostgresAuthState.load(optionsFor(lease)))!;
      const write = jest.spyOn(repository, 'write');
      try {
        await sut.saveCreds();
        // "Updated" to what it was.
        Object.assign(sut.creds, { accountSyncCounter: sut.creds.accountSyncCounter, me: sut.creds.me });
        await sut.saveCreds();
        expect(write).not.toHaveBeenCalled();
        sut.creds.accountSyncCounter = 9;
        await sut.saveCreds();
        await sut.saveCreds();
        expect(write).toHaveBeenCalledTimes(1);
        expect((await PostgresAuthState.load(optionsFor(lease)))!.creds.accountSyncCounter).toBe(9);
        // A pairing's first flush counts as stored too.
        write.mockClear();
        await first.saveCreds();
        expect(write).not.toHaveBeenCalled();
      } finally {
        write.mockRestore();
      }
    });

    it('should drop keys of an earlier linked device on the first flush of a new pairing', async () => {
      const lease = await leaseFor('i-replace');
      await repository.write(lease, { creds: '{}', keys: [{ type: 'session', id: 'old', value: '"x"' }] });
      const sut = PostgresAuthState.fresh(optionsFor(lease));
      await sut.state.keys.set({ session: { new: Uint8Array.from([1]) } });
      await sut.persist();
      expect([...(await repository.readKeys('i-replace', 'session', ['old', 'new'])).keys()]).toEqual(['new']);
    });
  });

  describe('before registration', () => {
    it('should persist nothing while a pairing is in progress', async () => {
      const lease = await leaseFor('i-pairing');
      const sut = PostgresAuthState.fresh(optionsFor(lease));
      await sut.state.keys.set({ session: { s: Uint8Array.from([1]) } });
      // requestPairingCode sets `me` before the phone confirms: that half-state must stay in memory.
      sut.creds.me = { id: '5511999999999@s.whatsapp.net', name: '~' };
      await sut.saveCreds();
      expect(await repository.readCreds('i-pairing')).toBeNull();
      expect(await repository.readKeys('i-pairing', 'session', ['s'])).toEqual(new Map());
      expect(await PostgresAuthState.load(optionsFor(lease))).toBeNull();
      // reads are served from memory meanwhile
      expect(Object.keys(await sut.state.keys.get('session', ['s']))).toEqual(['s']);
    });
  });

  describe('reads', () => {
    it('should ask the database once for a key that is missing, and forget that once the key is set', async () => {
      const lease = await leaseFor('i-absent');
      const fresh = PostgresAuthState.fresh(optionsFor(lease));
      await fresh.persist();
      const sut = (await PostgresAuthState.load(optionsFor(lease)))!;
      const reads = jest.spyOn(repository, 'readKeys');
      try {
        for (let i = 0; i < 3; i++) expect(await sut.state.keys.get('tctoken', ['5511999999999@s.whatsapp.net'])).toEqual({});
        expect(reads).toHaveBeenCalledTimes(1);

        await sut.state.keys.set({ tctoken: { '5511999999999@s.whatsapp.net': { token: Buffer.from('t1'), timestamp: '1' } } });
        // Baileys' own cache now answers; a second loaded state (no cache) proves the row is stored.
        const other = (await PostgresAuthState.load(optionsFor(lease)))!;
        const stored = await other.state.keys.get('tctoken', ['5511999999999@s.whatsapp.net']);
        expect(Buffer.from(stored['5511999999999@s.whatsapp.net'].token).toString()).toBe('t1');
        // Once Baileys' cache entry expires, the key is read from the store again, not taken as missing.
        expect((sut as unknown as { absent: Set<string> }).absent.size).toBe(0);
      } finally {
        reads.mockRestore();
      }
    });
  });

  describe('fencing', () => {
    it('should refuse writes after another worker took the lease over and stop writing for good', async () => {
      const stale = await leaseFor('i-fenced', 'w-old', 1000);
      const onFenced = jest.fn();
      const sut = PostgresAuthState.fresh(optionsFor(stale, onFenced));
      await sut.persist();
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const fresh = await leaseFor('i-fenced', 'w-new');
      await repository.write(fresh, { creds: '{"owner":"new"}' });

      await expect(sut.state.keys.set({ session: { s: Uint8Array.from([1]) } })).rejects.toBeInstanceOf(FencedOutError);
      expect(onFenced).toHaveBeenCalledTimes(1);
      const write = jest.spyOn(repository, 'write');
      await sut.saveCreds();
      await expect(sut.state.keys.set({ session: { t: Uint8Array.from([1]) } })).rejects.toBeInstanceOf(FencedOutError);
      expect(write).not.toHaveBeenCalled();
      write.mockRestore();
      expect(await repository.readCreds('i-fenced')).toBe('{"owner":"new"}');
      expect(onFenced).toHaveBeenCalledTimes(1);
    });

    it('should refuse writes once closed, writing nothing (never resolved as if stored: issue #39)', async () => {
      const lease = await leaseFor('i-closed');
      const sut = PostgresAuthState.fresh(optionsFor(lease));
      await sut.persist();
      sut.close();
      await expect(sut.state.keys.set({ session: { late: Uint8Array.from([1]) } })).rejects.toBeInstanceOf(AuthStateWriteError);
      expect(await repository.readKeys('i-closed', 'session', ['late'])).toEqual(new Map());
    });
  });
});
