/**
 * The cache in front of an instance's Signal key store (Baileys' `makeCacheableSignalKeyStore`).
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
