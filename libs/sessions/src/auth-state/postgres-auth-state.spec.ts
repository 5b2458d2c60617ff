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
});
