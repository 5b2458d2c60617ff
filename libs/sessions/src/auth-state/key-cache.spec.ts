import { SignalKeyCache } from './key-cache';

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
