import { DEFAULT_RETRY_SCHEDULE_MS, nextAttemptDelay, parseRetryAfter, parseSchedule } from './retry-schedule';

describe('retry schedule', () => {
  it('should follow the schedule with jitter and stop after it', () => {
    expect(nextAttemptDelay(DEFAULT_RETRY_SCHEDULE_MS, 1, null, () => 0.5)).toBe(5_000);
    expect(nextAttemptDelay(DEFAULT_RETRY_SCHEDULE_MS, 2, null, () => 0)).toBe(240_000);
    expect(nextAttemptDelay(DEFAULT_RETRY_SCHEDULE_MS, 8, null)).toBeNull();
  });

  it('should honour a longer Retry-After', () => {
    expect(nextAttemptDelay([1000], 1, 60_000, () => 0.5)).toBe(60_000);
  });

  it('should read Retry-After as seconds or a date', () => {
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 0)).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeNull();
  });

  it('should parse a configured schedule', () => {
    expect(parseSchedule('5s, 5m,2h,1d,250ms')).toEqual([5_000, 300_000, 7_200_000, 86_400_000, 250]);
    expect(() => parseSchedule('5 parsecs')).toThrow();
  });
});
