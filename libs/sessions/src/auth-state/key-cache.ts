import type { SignalDataSet, SignalDataTypeMap, SignalKeyStore, SignalKeyType } from '../baileys';

/**
 * The cache in front of an instance's Signal key store (cachedKeyStore, in place of Baileys' `makeCacheableSignalKeyStore`).
 *
 * Baileys' default is `@cacheable/node-cache`, which measures the rough size of every value it stores
 * (a walk of the whole object graph) and keeps a sweep timer per cache. The key store stores a Signal
 * session on every message sent or received, and a session record is a deep object: bench/send's
 * profile showed that walk as the largest self time of any cache on the send path. This one keeps the
 * same contract (entries live `ttlMs` after their last write, values are not cloned) with a Map: an
 * expired entry is dropped when it is read, and all expired entries at most once per `ttlMs`, on a
 * write, so no timer is left behind when the instance goes away.
 */
export class SignalKeyCache {
  private readonly entries = new Map<string, { value: unknown; expiresAt: number }>();
  private nextSweepAt: number;

  constructor(
    private readonly ttlMs = 5 * 60_000,
    private readonly now: () => number = Date.now,
  ) {
    this.nextSweepAt = now() + ttlMs;
  }

  get<T>(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  set<T>(key: string, value: T): void {
    const now = this.now();
    if (now >= this.nextSweepAt) this.sweep(now);
    // Re-inserted so the Map's order stays the order of expiry (every entry has the same TTL).
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
  }

  del(key: string): void {
    this.entries.delete(key);
  }

  flushAll(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private sweep(now: number): void {
    this.nextSweepAt = now + this.ttlMs;
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt > now) break;
      this.entries.delete(key);
    }
  }
}

/**
 * A read-through, write-through cache in front of `store`, as Baileys' `makeCacheableSignalKeyStore` is,
 * without its one mutex around every read and write (issue #38, bench/inbound).
 *
 * Baileys reads a session or sender key and writes it back for every message it decrypts or sends; its
 * cache ran each read and write under one `async-mutex` lock, and awaited the cache for every id: several
 * promise hops a key. The lock kept two things; both hold here without it:
 *
 * - **The store sees the writes in their order.** `set` updates the cache and hands the store the write
 *   before it returns to any other code (the store queues it at once: PostgresAuthState's KeyWriteQueue);
 *   each write still resolves when the store says so.
 * - **A read from the store never puts an older value in the cache.** A read that misses goes to the
 *   store; a write made while it was out is newer than what the store answered, so then the read takes
 *   the cache's value where there is one, and keeps nothing it read in the cache. Without the lock, the
 *   read may answer the value from before that write, which is what it would have answered had the lock
 *   let it go first.
 *
 * As Baileys' cache: a value written as null is kept (a read answers it as null), a value the store does
 * not have is not, and values are not cloned.
 */
export function cachedKeyStore(store: SignalKeyStore, cache = new SignalKeyCache()): SignalKeyStore {
  const keyOf = (type: string, id: string) => `${type}.${id}`;
  /** Writes so far: a read that saw it change while it was out keeps nothing it read. */
  let writes = 0;
  return {
    async get<T extends SignalKeyType>(type: T, ids: string[]): Promise<{ [id: string]: SignalDataTypeMap[T] }> {
      const data: { [id: string]: SignalDataTypeMap[T] } = {};
      const missing: string[] = [];
      for (const id of ids) {
        const item = cache.get<SignalDataTypeMap[T]>(keyOf(type, id));
        if (item !== undefined) data[id] = item;
        else missing.push(id);
      }
      if (missing.length === 0) return data;
      const before = writes;
      const fetched = await store.get(type, missing);
      for (const id of missing) {
        const key = keyOf(type, id);
        if (writes !== before) {
          const written = cache.get<SignalDataTypeMap[T]>(key);
          if (written !== undefined) {
            data[id] = written;
            continue;
          }
        }
        const item = fetched[id];
        if (!item) continue;
        data[id] = item;
        if (writes === before) cache.set(key, item);
      }
      return data;
    },
    // Async only for its errors: everything up to the store's call runs before set() returns.
    async set(data: SignalDataSet): Promise<void> {
      writes++;
      for (const type in data) {
        const values = data[type as SignalKeyType] as Record<string, unknown> | undefined;
        for (const id in values) cache.set(keyOf(type, id), values[id]);
      }
      await store.set(data);
    },
    async clear(): Promise<void> {
      cache.flushAll();
      await store.clear?.();
    },
  };
}
