/**
 * Token buckets, one per key, in this process's memory. Each key may spend `burst` requests at once
 * and earns `perSecond` back continuously; a request finding less than one token is refused with the
 * time until the next one. Limits are therefore per gateway replica: N replicas behind a balancer let
 * a token through N times the configured rate.
 */

/** A configured limit; `undefined` in the config means off. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

/**
 * `20/s`, `600/m` or `20/s,burst=40` (the burst defaults to one period's count); `0` or `off` disables.
 * Throws with the reason, for the config loader to name the variable.
 */
export function parseRateLimit(raw: string): RateLimit | undefined {
  const value = raw.trim().toLowerCase();
  if (value === '0' || value === 'off') return undefined;
  const match = /^(\d+)\s*\/\s*(s|m)(?:\s*,\s*burst\s*=\s*(\d+))?$/.exec(value);
  if (!match) throw new Error(`must be like 20/s, 600/m or 20/s,burst=40 (or 0/off to disable), got "${raw}"`);
  const count = Number(match[1]);
  const perSecond = match[2] === 's' ? count : count / 60;
  const burst = match[3] === undefined ? count : Number(match[3]);
  if (count < 1 || count > 1_000_000) throw new Error(`the rate must be between 1 and 1000000, got ${count}`);
  if (burst < 1 || burst > 1_000_000) throw new Error(`the burst must be between 1 and 1000000, got ${burst}`);
  return { perSecond, burst };
}

const SWEEP_EVERY_MS = 60_000;

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms, monotonic). */
  at: number;
}

export interface TokenBucketOptions {
  /** Buckets kept at most; beyond, the longest-held are dropped (a dropped bucket comes back full). */
  maxKeys?: number;
  /** A bucket untouched this long is forgotten (it would be full again anyway, if idle at least burst/rate). */
  idleMs?: number;
}

export class TokenBucketLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxKeys: number;
  private readonly idleMs: number;
  private lastSweep = 0;
  /** Tokens left after the last `take` (whole), for the RateLimit-Remaining header: no object per call. */
  remaining = 0;

  constructor(
    readonly limit: RateLimit,
    options: TokenBucketOptions = {},
  ) {
    this.maxKeys = options.maxKeys ?? 100_000;
    // Never shorter than a full refill, or forgetting a bucket would hand back tokens it had not earned.
    this.idleMs = Math.max(options.idleMs ?? 10 * 60_000, Math.ceil((limit.burst / limit.perSecond) * 1000));
  }

  /** Whether `key` holds a bucket (it has been charged and not forgotten since). */
  has(key: string): boolean {
    return this.buckets.has(key);
  }

  /** Spends one token of `key`: 0 when allowed, else the milliseconds until one is earned. */
  take(key: string, now: number = performance.now()): number {
    if (now - this.lastSweep >= SWEEP_EVERY_MS) this.sweep(now);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.sweep(now);
      bucket = { tokens: this.limit.burst, at: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.limit.perSecond);
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.remaining = Math.floor(bucket.tokens);
      return 0;
    }
    this.remaining = 0;
    return Math.ceil(((1 - bucket.tokens) / this.limit.perSecond) * 1000);
  }

  /** How long `key` must wait before its next request is allowed, without spending (0: it may go). */
  waitFor(key: string, now: number = performance.now()): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    const tokens = Math.min(this.limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.limit.perSecond);
    return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) / this.limit.perSecond) * 1000);
  }

  get size(): number {
    return this.buckets.size;
  }

  /**
   * Forgets idle buckets (once a minute, or when a new key would exceed `maxKeys`); if that is not
   * enough, drops the oldest-inserted, so a flood of fresh keys cannot grow memory without bound.
   */
  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) if (now - bucket.at >= this.idleMs) this.buckets.delete(key);
    if (this.buckets.size < this.maxKeys) return;
    // Map iteration is insertion order: the first keys are the longest-held.
    let excess = this.buckets.size - Math.floor(this.maxKeys * 0.9);
    for (const key of this.buckets.keys()) {
      if (excess-- <= 0) break;
      this.buckets.delete(key);
    }
  }
}
