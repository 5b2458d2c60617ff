/** Svix's schedule: after the first attempt, retries 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h later. */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** Parses RETRY_SCHEDULE (`5s,5m,30m,2h` style) into milliseconds. */
export function parseSchedule(text: string): number[] {
  return text.split(',').map((part) => {
    const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(part);
    if (!match) throw new Error(`"${part}" is not a duration like 5s, 5m or 2h`);
    const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 'ms' | 's' | 'm' | 'h' | 'd'];
    return Math.round(Number(match[1]) * unit);
  });
}

/**
 * When attempt `attempt` (1-based, just failed) is retried, or null when the schedule is used up.
 * Jitter of ±20% spreads a receiver's retries; a `Retry-After` asks for at least that long.
 */
export function nextAttemptDelay(schedule: number[], attempt: number, retryAfterMs: number | null, random = Math.random): number | null {
  const base = schedule[attempt - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (0.8 + random() * 0.4));
  return retryAfterMs !== null ? Math.max(jittered, Math.min(retryAfterMs, 86_400_000)) : jittered;
}

/** `Retry-After` as seconds or an HTTP date, in ms from now; null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
