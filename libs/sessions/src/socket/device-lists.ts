import { DEFAULT_CACHE_TTLS, type PossiblyExtendedCacheStore } from '../baileys';

/** A user's device list as Baileys caches it, and when it expires (ms since the epoch). */
export interface DeviceListEntry {
  user: string;
  devices: unknown[];
  expiresAt: number;
}

/** Sets between two sweeps of expired entries. */
const SWEEP_EVERY = 64;
/** Lists handed to an instance's next holder at most (DeviceListCache.export). */
const EXPORT_LIMIT = 1_000;

/**
 * One instance's cache of its contacts' device lists (Baileys' `userDevicesCache`), kept by the
 * worker across the instance's sockets instead of a new one per socket.
 *
 * Baileys asks WhatsApp for a user's devices (a usync query) before its first message to that user on
 * a socket, and caches the answer for five minutes; device notifications update the cache. A socket
 * of its own started empty, so every reconnect, and every worker taking an instance over, queried the
 * devices of each contact again before its first send (a round trip on the send's path, and a query
 * more to WhatsApp per contact and per reconnect). Kept here, a list lives its five minutes, as it
 * does on a socket that stays open; a device notification received on any of the instance's sockets
 * updates it.
 */
export class DeviceListCache implements PossiblyExtendedCacheStore {
  private readonly entries = new Map<string, { value: unknown; expiresAt: number }>();
  private setsSinceSweep = 0;

  constructor(
    private readonly ttlMs = DEFAULT_CACHE_TTLS.USER_DEVICES * 1000,
    private readonly now: () => number = Date.now,
  ) {}

  get<T>(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > this.now()) return entry.value as T;
    this.entries.delete(key);
    return undefined;
  }

  set<T>(key: string, value: T): boolean {
    this.put(key, value, this.now() + this.ttlMs);
    return true;
  }

  del(key: string): boolean {
    return this.entries.delete(key);
  }

  flushAll(): void {
    this.entries.clear();
  }

  async mget<T>(keys: string[]): Promise<Record<string, T | undefined>> {
    const found: Record<string, T | undefined> = {};
    for (const key of keys) {
      const value = this.get<T>(key);
      if (value !== undefined) found[key] = value;
    }
    return found;
  }

  mset<T>(entries: Array<{ key: string; value: T }>): boolean {
    const expiresAt = this.now() + this.ttlMs;
    for (const { key, value } of entries) this.put(key, value, expiresAt);
    return true;
  }

  mdel(keys: string[]): boolean {
    for (const key of keys) this.entries.delete(key);
    return true;
  }

  /**
   * The lists not expired yet, with their expiry: what an instance's next holder may start from. At most
   * `limit`, the freshest: an instance that wrote to thousands of users in five minutes (a campaign) hands over
   * a bounded row.
   */
  export(limit = EXPORT_LIMIT): DeviceListEntry[] {
    const now = this.now();
    const live: DeviceListEntry[] = [];
    for (const [user, { value, expiresAt }] of this.entries) if (expiresAt > now && Array.isArray(value)) live.push({ user, devices: value, expiresAt });
    return live.length <= limit ? live : live.sort((a, b) => b.expiresAt - a.expiresAt).slice(0, limit);
  }

  /**
   * Lists another holder of the instance had, each until its own expiry (at most a full TTL from now):
   * a list this cache already holds is newer and kept.
   */
  seed(entries: ReadonlyArray<DeviceListEntry>): void {
    const now = this.now();
    for (const { user, devices, expiresAt } of entries) {
      if (typeof user !== 'string' || !Array.isArray(devices) || !(expiresAt > now) || this.get(user) !== undefined) continue;
      this.put(user, devices, Math.min(expiresAt, now + this.ttlMs));
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private put(key: string, value: unknown, expiresAt: number): void {
    this.entries.set(key, { value, expiresAt });
    if (++this.setsSinceSweep < SWEEP_EVERY) return;
    this.setsSinceSweep = 0;
    const now = this.now();
    for (const [user, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(user);
  }
}

/** The device-list caches of the instances this worker holds (DeviceListCache), by instance id. */
export class DeviceLists {
  private readonly caches = new Map<string, DeviceListCache>();

  constructor(private readonly create: () => DeviceListCache = () => new DeviceListCache()) {}

  /** The instance's cache, for each of its sockets on this worker. */
  of(instanceId: string): DeviceListCache {
    let cache = this.caches.get(instanceId);
    if (!cache) this.caches.set(instanceId, (cache = this.create()));
    return cache;
  }

  /** The instance's live lists for its next holder (DeviceListCache.export); none when it has no cache here. */
  export(instanceId: string): DeviceListEntry[] {
    return this.caches.get(instanceId)?.export() ?? [];
  }

  /** The instance left this worker (moved, deleted, logged out): its lists go with it. */
  forget(instanceId: string): void {
    this.caches.delete(instanceId);
  }

  get instances(): number {
    return this.caches.size;
  }
}
