/** How long a broker connection no sink has used is kept open. */
export const SINK_CONNECTION_IDLE_MS = 5 * 60_000;

interface Entry<T> {
  pending: Promise<T>;
  /** Set once the connection is open. */
  value?: T;
  lastUsed: number;
}

/**
 * The open broker connections of one transport, one per broker URL: opened on first use and shared by
 * the attempts that follow, forgotten when they break (the next attempt opens a new one) and closed
 * once no attempt has used them for `idleMs`, or at once when the relay says no enabled sink uses them
 * (`retain`). Without those a sink deleted, disabled or moved to another URL would leave its connection
 * (and, for NATS, its reconnects) behind. The sweep timer is unref'd and runs only while a connection is open.
 */
export class ConnectionPool<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly options: {
      open: (key: string) => Promise<T>;
      close: (connection: T) => Promise<unknown>;
      /** Called once the connection is open (to watch it close: then `forget` it). */
      opened?: (key: string, connection: T) => void;
      idleMs?: number;
      now?: () => number;
    },
  ) {}

  private get idleMs(): number {
    return this.options.idleMs ?? SINK_CONNECTION_IDLE_MS;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** The connection for `key`, opening it when there is none; a failed open is forgotten at once. */
  get(key: string): Promise<T> {
    const current = this.entries.get(key);
    if (current) {
      current.lastUsed = this.now();
      return current.pending;
    }
    const entry: Entry<T> = { pending: this.options.open(key), lastUsed: this.now() };
    this.entries.set(key, entry);
    this.startSweeper();
    entry.pending.then(
      (connection) => {
        entry.value = connection;
        if (this.entries.get(key) === entry) this.options.opened?.(key, connection);
        // Closed (by `close()` or a sweep) while it was opening: nobody will use it.
        else void this.options.close(connection).catch(() => undefined);
      },
      () => this.entries.get(key) === entry && this.remove(key),
    );
    return entry.pending;
  }

  /** Drops `connection` (broken) so the next `get` opens a new one; a newer connection for the key stays. */
  forget(key: string, connection: T): void {
    const entry = this.entries.get(key);
    if (entry?.value === connection) this.remove(key);
  }

  /** How many connections are open or opening. */
  get size(): number {
    return this.entries.size;
  }

  /** Closes the connections unused for `idleMs`. */
  async sweep(): Promise<number> {
    const before = this.now() - this.idleMs;
    const idle = [...this.entries].filter(([, entry]) => entry.value !== undefined && entry.lastUsed <= before);
    for (const [key] of idle) this.remove(key);
    await Promise.all(idle.map(([, entry]) => this.options.close(entry.value as T).catch(() => undefined)));
    return idle.length;
  }

  /**
   * Closes the connections (open or opening) whose key `keep` refuses: the sinks using them were
   * deleted, disabled or moved to another URL. Returns how many it closed.
   */
  async retain(keep: (key: string) => boolean): Promise<number> {
    const unused = [...this.entries].filter(([key]) => !keep(key));
    for (const [key] of unused) this.remove(key);
    // One still opening is closed once it opens (see `get`).
    await Promise.all(unused.map(([, entry]) => entry.value !== undefined && this.options.close(entry.value).catch(() => undefined)));
    return unused.length;
  }

  /** Closes every connection (the transport stops). */
  async close(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    this.stopSweeper();
    await Promise.all(entries.map((entry) => entry.pending.then((connection) => this.options.close(connection)).catch(() => undefined)));
  }

  private remove(key: string): void {
    this.entries.delete(key);
    if (this.entries.size === 0) this.stopSweeper();
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => void this.sweep(), Math.max(50, Math.min(this.idleMs / 2, 60_000)));
    this.sweeper.unref();
  }

  private stopSweeper(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}
