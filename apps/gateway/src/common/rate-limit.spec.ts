import { parseRateLimit, TokenBucketLimiter } from './rate-limit';

describe(TokenBucketLimiter.name, () => {
  describe('take', () => {
    it('should allow the burst at once, then refuse with the time until the next token', () => {
      const sut = new TokenBucketLimiter({ perSecond: 10, burst: 3 });
      expect([sut.take('a', 0), sut.take('a', 0), sut.take('a', 0)]).toEqual([0, 0, 0]);
      expect(sut.remaining).toBe(0);
      expect(sut.take('a', 0)).toBe(100);
      expect(sut.take('a', 40)).toBe(60);
    });

    it('should earn tokens back at the rate, never above the burst', () => {
      const sut = new TokenBucketLimiter({ perSecond: 10, burst: 3 });
      for (let n = 0; n < 3; n++) sut.take('a', 0);
      expect(sut.take('a', 100)).toBe(0);
      expect(sut.take('a', 100)).toBeGreaterThan(0);
      expect(sut.take('a', 60_000)).toBe(0);
      expect(sut.remaining).toBe(2);
    });

    it('should keep one key from spending another key’s tokens', () => {
      const sut = new TokenBucketLimiter({ perSecond: 1, burst: 1 });
      expect(sut.take('flood', 0)).toBe(0);
      expect(sut.take('flood', 0)).toBe(1000);
      expect(sut.take('quiet', 0)).toBe(0);
    });
  });

  describe('waitFor', () => {
    it('should tell the wait without spending', () => {
      const sut = new TokenBucketLimiter({ perSecond: 2, burst: 1 });
      expect(sut.waitFor('a', 0)).toBe(0);
      sut.take('a', 0);
      expect(sut.waitFor('a', 0)).toBe(500);
      expect(sut.waitFor('a', 0)).toBe(500);
      expect(sut.waitFor('a', 500)).toBe(0);
    });
  });

  describe('memory', () => {
    it('should forget buckets idle past idleMs', () => {
      const sut = new TokenBucketLimiter({ perSecond: 10, burst: 10 }, { idleMs: 1000 });
      sut.take('old', 0);
      sut.take('new', 59_000);
      sut.take('new', 61_000);
      expect(sut.has('old')).toBe(false);
      expect(sut.has('new')).toBe(true);
    });

    it('should never forget a bucket before it has refilled', () => {
      const sut = new TokenBucketLimiter({ perSecond: 1 / 60, burst: 10 }, { idleMs: 1000 });
      sut.take('slow', 0);
      sut.take('other', 61_000);
      expect(sut.has('slow')).toBe(true);
    });

    it('should hold at most maxKeys buckets under a flood of new keys', () => {
      const sut = new TokenBucketLimiter({ perSecond: 1, burst: 1 }, { maxKeys: 100 });
      for (let n = 0; n < 10_000; n++) sut.take(`key-${n}`, n);
      expect(sut.size).toBeLessThanOrEqual(100);
      expect(sut.has('key-9999')).toBe(true);
    });
  });
});

describe(parseRateLimit.name, () => {
  it.each([
    ['20/s,burst=40', { perSecond: 20, burst: 40 }],
    ['20/s', { perSecond: 20, burst: 20 }],
    ['600/m', { perSecond: 10, burst: 600 }],
    [' 5 / S , burst = 7 ', { perSecond: 5, burst: 7 }],
  ])('should read %j', (raw, limit) => {
    expect(parseRateLimit(raw)).toEqual(limit);
  });

  it.each(['0', 'off', 'OFF'])('should read %j as off', (raw) => {
    expect(parseRateLimit(raw)).toBeUndefined();
  });

  it.each(['20', '20/h', '20/s,burst=', 'burst=4', '-1/s', '0/s', '20/s,burst=0', '1.5/s'])('should refuse %j', (raw) => {
    expect(() => parseRateLimit(raw)).toThrow(/must/);
  });
});
