import type { SignalDataSet, SignalKeyStore } from '../baileys';
import { cachedKeyStore, SignalKeyCache } from './key-cache';

describe('SignalKeyCache', () => {
  let clock: number;
  const cache = () => new SignalKeyCache(1000, () => clock);

  beforeEach(() => (clock = 10_000));

  it('answers what was set, the same object (no clone), until its TTL from the last write runs out', () => {
    const keys = cache();
    const session = { chain: { index: 1 } };
    keys.set('session.a', session);
    expect(keys.get('session.a')).toBe(session);
    clock += 999;
    expect(keys.get('session.a')).toBe(session);
    keys.set('session.a', session);
    clock += 999;
    expect(keys.get('session.a')).toBe(session);
    clock += 1;
    expect(keys.get('session.a')).toBeUndefined();
    expect(keys.size).toBe(0);
  });

  it('forgets a deleted key and everything on flushAll', () => {
    const keys = cache();
    keys.set('a', 1);
    keys.set('b', 2);
    keys.del('a');
    expect(keys.get('a')).toBeUndefined();
    expect(keys.get('b')).toBe(2);
    keys.flushAll();
    expect(keys.get('b')).toBeUndefined();
  });

  it('drops expired entries that are never read again, on a write once a TTL has passed', () => {
    const keys = cache();
    for (let i = 0; i < 100; i++) keys.set(`old.${i}`, i);
    clock += 500;
    keys.set('recent', 1);
    clock += 600; // the old ones have expired, 'recent' has not
    keys.set('new', 2);
    expect(keys.size).toBe(2);
    expect(keys.get('recent')).toBe(1);
    expect(keys.get('new')).toBe(2);
  });

  it('keeps an entry rewritten after older ones when sweeping (expiry follows the last write)', () => {
    const keys = cache();
    keys.set('a', 1);
    keys.set('b', 2);
    clock += 800;
    keys.set('a', 3); // now the newest
    clock += 300; // b expired, a has 500 ms left
    keys.set('c', 4);
    expect(keys.size).toBe(2);
    expect(keys.get('a')).toBe(3);
    expect(keys.get('b')).toBeUndefined();
  });
});

describe('cachedKeyStore', () => {
  type Stored = Record<string, Record<string, unknown>>;
  /** A session record as the test writes it (Baileys' own are bytes; the store and cache never look inside). */
  const record = (n: number) => ({ n }) as unknown as Uint8Array;
  /** A store whose reads wait until released, and which records its writes in the order it got them. */
  function slowStore(initial: Stored) {
    const stored: Stored = structuredClone(initial);
    const writes: SignalDataSet[] = [];
    const reads: Array<() => void> = [];
    let slow = false;
    const store: SignalKeyStore = {
      get: async (type, ids) => {
        const snapshot = Object.fromEntries(ids.filter((id) => stored[type]?.[id] !== undefined).map((id) => [id, stored[type][id]]));
        if (slow) await new Promise<void>((resolve) => reads.push(resolve));
        return snapshot as never;
      },
      set: (data) => {
        writes.push(data);
        for (const [type, values] of Object.entries(data))
          for (const [id, value] of Object.entries(values ?? {})) {
            stored[type] ??= {};
            if (value === null) delete stored[type][id];
            else stored[type][id] = value;
          }
        return Promise.resolve();
      },
    };
    return { store, writes, stored, slowReads: () => (slow = true), release: () => reads.splice(0).forEach((resolve) => resolve()) };
  }

  it('reads through once, then answers from the cache; a write goes to the store and the cache', async () => {
    const backing = slowStore({ session: { a: { n: 1 } } });
    const get = jest.spyOn(backing.store, 'get');
    const keys = cachedKeyStore(backing.store);
    expect(await keys.get('session', ['a', 'b'])).toEqual({ a: { n: 1 } });
    expect(await keys.get('session', ['a'])).toEqual({ a: { n: 1 } });
    expect(get).toHaveBeenCalledTimes(1);
    await keys.set({ session: { a: record(2) } });
    expect(await keys.get('session', ['a'])).toEqual({ a: { n: 2 } });
    expect(backing.stored.session.a).toEqual({ n: 2 });
    expect(get).toHaveBeenCalledTimes(1);
  });

  it('hands the store every write before it returns, in order, without waiting for the one before', async () => {
    const backing = slowStore({});
    const finish: Array<() => void> = [];
    const store: SignalKeyStore = { ...backing.store, set: (data) => (backing.writes.push(data), new Promise<void>((resolve) => finish.push(resolve))) };
    const keys = cachedKeyStore(store);
    const first = keys.set({ session: { a: record(1) } });
    void keys.set({ session: { a: record(2) } });
    expect(backing.writes).toEqual([{ session: { a: { n: 1 } } }, { session: { a: { n: 2 } } }]);
    expect(await keys.get('session', ['a'])).toEqual({ a: { n: 2 } });
    finish.forEach((resolve) => resolve());
    await first;
  });

  it('a read that was out while a write came keeps nothing it read: the written value wins', async () => {
    const backing = slowStore({ session: { a: { n: 1 }, b: { n: 1 } } });
    const keys = cachedKeyStore(backing.store);
    backing.slowReads();
    const reading = keys.get('session', ['a', 'b']);
    await keys.set({ session: { a: record(2) } });
    backing.release();
    // `a` as written; `b` as read, but not kept: the next read asks the store again.
    expect(await reading).toEqual({ a: { n: 2 }, b: { n: 1 } });
    const get = jest.spyOn(backing.store, 'get');
    const again = keys.get('session', ['a', 'b']);
    backing.release();
    await new Promise((resolve) => setImmediate(resolve));
    backing.release();
    expect(await again).toEqual({ a: { n: 2 }, b: { n: 1 } });
    expect(get).toHaveBeenCalledWith('session', ['b']);
  });

  it('a key deleted while a read was out is not put back in the cache from the read', async () => {
    const backing = slowStore({ session: { a: { n: 1 } } });
    const keys = cachedKeyStore(backing.store);
    backing.slowReads();
    const reading = keys.get('session', ['a']);
    await keys.set({ session: { a: null } });
    backing.release();
    await reading;
    // The deletion is kept (as Baileys' cache keeps it: a null value), not the value read before it.
    expect(await keys.get('session', ['a'])).toEqual({ a: null });
    expect(backing.stored.session.a).toBeUndefined();
  });
});
