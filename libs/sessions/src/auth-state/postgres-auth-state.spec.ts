import { FencedOutError, type AuthStateRepository, type KeyMutation, type Lease } from '@gw/persistence';
import pino from 'pino';
import { serializeAuthValue } from './auth-serialization';
import { AuthStateWriteError, PostgresAuthState } from './postgres-auth-state';
import { initAuthCreds } from '../baileys';

/**
 * The contract between Baileys and our key store (issue #39): `keys.set` resolves only once its keys
 * are durable. A database that does not answer is waited for; a write that finally fails rejects and
 * stops the session first, so Baileys never goes on with keys we did not store.
 */
describe('PostgresAuthState: keys.set resolves only when durable', () => {
  const lease: Lease = { instanceId: 'i-durable', workerId: 'w1', fencingToken: '1' } as Lease;
  const logger = pino({ level: 'silent' });
  const connectionLost = () => Object.assign(new Error('Connection terminated unexpectedly'), {});

  /** A repository whose writes fail with `failures()` (undefined: succeed) and that records what it stored. */
  function repositoryWith(failures: () => Error | undefined) {
    const stored: KeyMutation[] = [];
    let attempts = 0;
    const repository = {
      readCreds: async () => serializeAuthValue({ ...initAuthCreds(), me: { id: '5511999999999:1@s.whatsapp.net' } }),
      readKeys: async () => new Map<string, string>(),
      write: async (_lease: Lease, change: { keys?: KeyMutation[]; creds?: string }) => {
        attempts++;
        const error = failures();
        if (error) throw error;
        stored.push(...(change.keys ?? []));
      },
    } as unknown as AuthStateRepository;
    return { repository, stored, attempts: () => attempts };
  }

  async function loaded(repository: AuthStateRepository, extra: { outageWaitMs?: number; onWriteFailed?: jest.Mock; onFenced?: jest.Mock } = {}) {
    const sut = await PostgresAuthState.load({ repository, lease, logger, onFenced: extra.onFenced ?? jest.fn(), ...extra });
    if (!sut) throw new Error('nothing loaded');
    return sut;
  }

  it('waits while the database does not answer and resolves once the keys are stored', async () => {
    let down = true;
    const db = repositoryWith(() => (down ? connectionLost() : undefined));
    const onWriteFailed = jest.fn();
    const sut = await loaded(db.repository, { outageWaitMs: 5_000, onWriteFailed });
    let resolved = false;
    const setting = Promise.resolve(sut.state.keys.set({ 'pre-key': { '7': { public: Buffer.from('p'), private: Buffer.from('q') } } })).then(
      () => (resolved = true),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(resolved).toBe(false);
    expect(db.stored).toEqual([]);
    expect(db.attempts()).toBeGreaterThan(1);
    down = false;
    await setting;
    expect(resolved).toBe(true);
    expect(db.stored.map((key) => `${key.type}/${key.id}`)).toEqual(['pre-key/7']);
    expect(onWriteFailed).not.toHaveBeenCalled();
  });

  it('makes a key read that meets no database wait for it, as a write does, and answers once it is back', async () => {
    let down = true;
    let reads = 0;
    const db = repositoryWith(() => undefined);
    db.repository.readKeys = async () => {
      reads++;
      if (down) throw connectionLost();
      return new Map([['a.0', serializeAuthValue(Uint8Array.from([7]))]]);
    };
    const sut = await loaded(db.repository, { outageWaitMs: 5_000 });
    let answered: unknown;
    const reading = Promise.resolve(sut.state.keys.get('session', ['a.0'])).then((value) => (answered = value));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(answered).toBeUndefined();
    expect(reads).toBeGreaterThan(1);
    down = false;
    await reading;
    expect(answered).toEqual({ 'a.0': Uint8Array.from([7]) });
  });

  it('fails a key read when the database stays away past the wait, or for a reason of its own at once', async () => {
    const db = repositoryWith(() => undefined);
    let reads = 0;
    db.repository.readKeys = async () => {
      reads++;
      throw connectionLost();
    };
    const sut = await loaded(db.repository, { outageWaitMs: 300 });
    await expect(sut.state.keys.get('session', ['a.0'])).rejects.toThrow('Connection terminated unexpectedly');
    expect(reads).toBeGreaterThan(1);
    reads = 0;
    db.repository.readKeys = async () => {
      reads++;
      throw new Error('permission denied for table auth_keys');
    };
    await expect(sut.state.keys.get('session', ['b.0'])).rejects.toThrow('permission denied');
    expect(reads).toBe(1);
  });

  it('rejects and stops the session when the database stays away longer than the wait (the lease would lapse)', async () => {
    const db = repositoryWith(connectionLost);
    const onWriteFailed = jest.fn();
    const sut = await loaded(db.repository, { outageWaitMs: 300, onWriteFailed });
    await expect(sut.state.keys.set({ session: { 'a.0': Uint8Array.from([1]) } })).rejects.toBeInstanceOf(AuthStateWriteError);
    expect(onWriteFailed).toHaveBeenCalledTimes(1);
    expect(db.stored).toEqual([]);
    // Every later write fails at once: nothing goes on with keys that were not stored.
    const attempts = db.attempts();
    await expect(sut.state.keys.set({ session: { 'b.0': Uint8Array.from([2]) } })).rejects.toBeInstanceOf(AuthStateWriteError);
    expect(db.attempts()).toBe(attempts);
    expect(onWriteFailed).toHaveBeenCalledTimes(1);
  });

  it('rejects at once, stopping the session, when a write fails for a reason of its own', async () => {
    const db = repositoryWith(() => Object.assign(new Error('value too long'), { code: '22001' }));
    const onWriteFailed = jest.fn();
    const sut = await loaded(db.repository, { outageWaitMs: 5_000, onWriteFailed });
    await expect(sut.state.keys.set({ session: { 'a.0': Uint8Array.from([1]) } })).rejects.toBeInstanceOf(AuthStateWriteError);
    expect(db.attempts()).toBe(1);
    expect(onWriteFailed).toHaveBeenCalledTimes(1);
  });

  it('rejects a write still waiting when the session closes (lease lost), and every write after it', async () => {
    const db = repositoryWith(connectionLost);
    const sut = await loaded(db.repository, { outageWaitMs: 60_000 });
    const setting = sut.state.keys.set({ session: { 'a.0': Uint8Array.from([1]) } });
    await new Promise((resolve) => setTimeout(resolve, 150));
    sut.close();
    await expect(setting).rejects.toBeInstanceOf(AuthStateWriteError);
    await expect(sut.state.keys.set({ session: { 'b.0': Uint8Array.from([2]) } })).rejects.toBeInstanceOf(AuthStateWriteError);
    expect(db.stored).toEqual([]);
  });

  it('passes fencing through to onFenced, not onWriteFailed', async () => {
    const db = repositoryWith(() => new FencedOutError(lease.instanceId));
    const onFenced = jest.fn();
    const onWriteFailed = jest.fn();
    const sut = await loaded(db.repository, { onFenced, onWriteFailed });
    await expect(sut.state.keys.set({ session: { 'a.0': Uint8Array.from([1]) } })).rejects.toBeInstanceOf(FencedOutError);
    expect(onFenced).toHaveBeenCalledTimes(1);
    expect(onWriteFailed).not.toHaveBeenCalled();
  });

  describe('settle (a drain stores the Signal state before the lease goes, issue #39)', () => {
    it('waits for a key commit under way and a creds write, and answers true once both are stored', async () => {
      let down = true;
      const db = repositoryWith(() => (down ? connectionLost() : undefined));
      const sut = await loaded(db.repository, { outageWaitMs: 5_000 });
      // A send's commit, handed over after its stanza went out, and a creds update.
      const commit = Promise.resolve(sut.state.keys.set({ session: { 'peer.0': Uint8Array.from([1]) } }));
      void sut.saveCreds();
      let settled: boolean | undefined;
      const settling = sut.settle(5_000).then((ok) => (settled = ok));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBeUndefined();
      down = false;
      await commit;
      expect(await settling).toBe(true);
      expect(db.stored.map((key) => `${key.type}/${key.id}`)).toEqual(['session/peer.0']);
    });

    it('answers true at once when nothing is under way', async () => {
      const db = repositoryWith(() => undefined);
      const sut = await loaded(db.repository);
      expect(await sut.settle(1_000)).toBe(true);
    });

    it('answers false when a commit is not stored in time (the lease must not be handed over)', async () => {
      const db = repositoryWith(connectionLost);
      const sut = await loaded(db.repository, { outageWaitMs: 60_000 });
      const commit = Promise.resolve(sut.state.keys.set({ session: { 'peer.0': Uint8Array.from([1]) } })).catch((error: unknown) => error);
      const started = Date.now();
      expect(await sut.settle(300)).toBe(false);
      expect(Date.now() - started).toBeLessThan(2_000);
      sut.close();
      expect(await commit).toBeInstanceOf(AuthStateWriteError);
    });

    it('answers false when a commit failed', async () => {
      const db = repositoryWith(() => Object.assign(new Error('value too long'), { code: '22001' }));
      const sut = await loaded(db.repository, { onWriteFailed: jest.fn() });
      await expect(sut.state.keys.set({ session: { 'a.0': Uint8Array.from([1]) } })).rejects.toBeInstanceOf(AuthStateWriteError);
      expect(await sut.settle(1_000)).toBe(false);
    });
  });

  describe("a decrypt's commit goes on before it is stored (ADR 0048)", () => {
    /** What Baileys commits for a decrypt: the session it moved, with the plaintext kept (ReceivedPlaintexts). */
    const decryptCommit = (peer: string, byte: number) => ({
      session: { [`${peer}.0`]: Uint8Array.from([byte]) },
      'received-plaintext': { [`hash-${peer}-${byte}`]: Buffer.from([byte]) },
    });

    /** A repository whose writes wait until the test lets them through, one by one. */
    function gatedRepository() {
      const db = repositoryWith(() => undefined);
      const gates: Array<() => void> = [];
      const write = db.repository.write.bind(db.repository);
      (db.repository as unknown as { write: typeof write }).write = async (...args) => {
        await new Promise<void>((resolve) => gates.push(resolve));
        return write(...args);
      };
      const open = async () => {
        while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
        gates.shift()?.();
        await new Promise((resolve) => setImmediate(resolve));
      };
      return { ...db, open, waiting: () => gates.length };
    }

    it('resolves a decrypt commit at once, writes the ones queued meanwhile together, and keysStored() waits for them', async () => {
      const db = gatedRepository();
      const sut = await loaded(db.repository);
      await sut.state.keys.set(decryptCommit('a', 1) as never);
      await sut.state.keys.set(decryptCommit('a', 2) as never);
      await sut.state.keys.set(decryptCommit('b', 1) as never);
      let stored = false;
      const storing = sut.keysStored().then(() => (stored = true));
      await db.open();
      expect(db.stored.map((key) => `${key.type}/${key.id}`)).toEqual(['session/a.0', 'received-plaintext/hash-a-1']);
      expect(stored).toBe(false);
      await db.open();
      await storing;
      // One write for the two queued behind the first: a's session once, at its latest value.
      expect(db.attempts()).toBe(2);
      expect(db.stored.slice(2).map((key) => `${key.type}/${key.id}`)).toEqual([
        'session/a.0',
        'received-plaintext/hash-a-2',
        'session/b.0',
        'received-plaintext/hash-b-1',
      ]);
      expect(db.stored[2].value).toBe(serializeAuthValue(Uint8Array.from([2])));
    });

    it('makes every other write wait for its own batch (pre-keys before their upload), behind the decrypts queued before it', async () => {
      const db = gatedRepository();
      const sut = await loaded(db.repository);
      await sut.state.keys.set(decryptCommit('a', 1) as never);
      let preKeysStored = false;
      const preKeys = Promise.resolve(sut.state.keys.set({ 'pre-key': { '9': { public: Buffer.from('p'), private: Buffer.from('q') } } })).then(
        () => (preKeysStored = true),
      );
      await db.open();
      expect(preKeysStored).toBe(false);
      await db.open();
      await preKeys;
      expect(db.stored.map((key) => `${key.type}/${key.id}`)).toEqual(['session/a.0', 'received-plaintext/hash-a-1', 'pre-key/9']);
    });

    it('answers a key read from the write still queued, which is newer than the database', async () => {
      const db = gatedRepository();
      const sut = await loaded(db.repository);
      const readKeys = jest.spyOn(db.repository, 'readKeys');
      await sut.state.keys.set(decryptCommit('a', 1) as never);
      await sut.state.keys.set({ ...decryptCommit('a', 2), session: { 'a.0': null } } as never);
      // Past Baileys' cache (a key it evicted): the store itself answers.
      const store = sut as unknown as { getKeys(type: string, ids: string[]): Promise<Record<string, unknown>> };
      expect(await store.getKeys('session', ['a.0'])).toEqual({});
      expect(await store.getKeys('received-plaintext', ['hash-a-2'])).toEqual({ 'hash-a-2': Buffer.from([2]) });
      expect(readKeys).not.toHaveBeenCalled();
      await db.open();
      await db.open();
    });

    it('settle() waits for the decrypts queued, and a closed store refuses what is still queued', async () => {
      const db = gatedRepository();
      const sut = await loaded(db.repository);
      await sut.state.keys.set(decryptCommit('a', 1) as never);
      await sut.state.keys.set(decryptCommit('a', 2) as never);
      let settled: boolean | undefined;
      const settling = sut.settle(5_000).then((ok) => (settled = ok));
      await db.open();
      expect(settled).toBeUndefined();
      await db.open();
      expect(await settling).toBe(true);

      await sut.state.keys.set(decryptCommit('b', 1) as never);
      await sut.state.keys.set(decryptCommit('b', 2) as never);
      const queued = sut.keysStored();
      sut.close();
      await db.open();
      await expect(queued).rejects.toBeInstanceOf(AuthStateWriteError);
      expect(db.stored.map((key) => key.id)).not.toContain('hash-b-2');
      expect(await sut.settle(100)).toBe(false);
    });
  });
});
