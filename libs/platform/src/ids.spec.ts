import { recordId } from './ids';

describe('recordId', () => {
  it('should make ids of the asked length, in the records style, never the same twice across many pool refills', () => {
    const seen = new Set<string>();
    // 7 bytes each: ~585 ids per 4 KB pool, so this crosses the refill about 50 times.
    for (let n = 0; n < 30_000; n++) {
      const id = recordId();
      expect(id).toMatch(/^r[0-9a-f]{14}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(30_000);
    expect(recordId(7)).toMatch(/^r[0-9a-f]{7}$/);
    expect(recordId(10_000)).toMatch(/^r[0-9a-f]{10000}$/);
  });

  it('should spread its digits evenly (no byte of the pool handed out as a constant)', () => {
    const counts = new Map<string, number>();
    for (let n = 0; n < 20_000; n++) for (const digit of recordId().slice(1)) counts.set(digit, (counts.get(digit) ?? 0) + 1);
    expect(counts.size).toBe(16);
    // 280,000 digits: 17,500 each expected; a constant or reused byte would skew them far beyond 5 %.
    for (const count of counts.values()) expect(Math.abs(count - 17_500)).toBeLessThan(875);
  });
});
