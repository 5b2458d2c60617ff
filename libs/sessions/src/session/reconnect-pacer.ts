/** A session's pending reconnect: `cancel` drops it (the reconnect will not run). */
export interface PacedWait {
  cancel(): void;
}

export interface ReconnectPacerOptions {
  /** A backoff cut short by "reachable again" runs within a random delay up to this (the gate bounds the rest). */
  resumeJitterMs: number;
  /** While many sessions wait, the worker tries one of them at least this often (its scout). */
  scoutIntervalMs: number;
  /** Scouting starts only when at least this many sessions wait in a backoff longer than the interval. */
  scoutMinWaiting: number;
  random?: () => number;
  now?: () => number;
}

interface Entry {
  dueAt: number;
  timer: NodeJS.Timeout;
  run: () => void;
}

/**
 * The worker's reconnect backoffs, paced together (issue #34, mode 7). Each session backs off on its own
 * (jittered, growing to RECONNECT_MAX_MS) while WhatsApp stays out of reach, so a long outage leaves every
 * session waiting out a backoff near the cap when the server comes back: recovery then took as long as
 * that backoff (p50 73 s for 200 instances). Two shared signals shorten it without hammering a dead server:
 *
 * - reachable(): a session that had failed logged in again. Every waiting backoff is cut to a short random
 *   delay (resumeJitterMs); the HandshakeGate still bounds the handshakes at once. At most once per scout
 *   interval, so a few instances failing for their own reasons (a dead proxy) are not retried on every
 *   other session's recovery.
 * - the scout: while at least `scoutMinWaiting` sessions wait (a server-wide outage, not one broken
 *   instance), and no try of this worker has started for `scoutIntervalMs`, the session due first is tried
 *   now. The worker thus notices the server is back within about one interval, whatever its sessions'
 *   backoffs have grown to; its load on a dead server is one try per interval, and each scout's own backoff
 *   keeps growing.
 */
export class ReconnectPacer {
  private readonly waiting = new Map<object, Entry>();
  private lastTryAt = 0;
  private lastSignalAt = Number.NEGATIVE_INFINITY;
  private scoutTimer: NodeJS.Timeout | undefined;
  private readonly random: () => number;
  private readonly now: () => number;
  private cuts = 0;
  private scouts = 0;

  constructor(private readonly options: ReconnectPacerOptions) {
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
  }

  /** Sessions waiting now; backoffs cut by reachable(); scout tries (metrics, tests). */
  get stats(): { waiting: number; cuts: number; scouts: number } {
    return { waiting: this.waiting.size, cuts: this.cuts, scouts: this.scouts };
  }

  /** `run` after `delayMs`, or sooner when the server is known reachable again; replaces `key`'s earlier wait. */
  wait(key: object, delayMs: number, run: () => void): PacedWait {
    this.drop(key);
    const entry: Entry = { dueAt: this.now() + delayMs, run, timer: undefined as unknown as NodeJS.Timeout };
    entry.timer = setTimeout(() => this.fire(key, entry), delayMs);
    this.waiting.set(key, entry);
    this.armScout();
    return { cancel: () => this.drop(key, entry) };
  }

  /** A session that had failed to reach the server logged in: cut every waiting backoff short. */
  reachable(): void {
    const now = this.now();
    if (now - this.lastSignalAt < this.options.scoutIntervalMs) return;
    this.lastSignalAt = now;
    for (const [key, entry] of this.waiting) {
      if (entry.dueAt - now <= this.options.resumeJitterMs) continue;
      clearTimeout(entry.timer);
      const delay = Math.round(this.random() * this.options.resumeJitterMs);
      entry.dueAt = now + delay;
      entry.timer = setTimeout(() => this.fire(key, entry), delay);
      this.cuts += 1;
    }
  }

  private fire(key: object, entry: Entry): void {
    if (this.waiting.get(key) !== entry) return;
    this.waiting.delete(key);
    this.lastTryAt = this.now();
    if (this.waiting.size === 0) this.disarmScout();
    entry.run();
  }

  private drop(key: object, only?: Entry): void {
    const entry = this.waiting.get(key);
    if (!entry || (only && entry !== only)) return;
    clearTimeout(entry.timer);
    this.waiting.delete(key);
    if (this.waiting.size === 0) this.disarmScout();
  }

  private armScout(): void {
    if (this.scoutTimer) return;
    this.scoutTimer = setInterval(() => this.scout(), this.options.scoutIntervalMs);
    this.scoutTimer.unref();
  }

  private disarmScout(): void {
    clearInterval(this.scoutTimer);
    this.scoutTimer = undefined;
  }

  private scout(): void {
    const now = this.now();
    if (now - this.lastTryAt < this.options.scoutIntervalMs) return;
    let first: [object, Entry] | undefined;
    let long = 0;
    for (const item of this.waiting) {
      if (item[1].dueAt - now <= this.options.scoutIntervalMs) continue;
      long += 1;
      if (!first || item[1].dueAt < first[1].dueAt) first = item;
    }
    if (!first || long < this.options.scoutMinWaiting) return;
    clearTimeout(first[1].timer);
    this.scouts += 1;
    this.fire(first[0], first[1]);
  }
}
