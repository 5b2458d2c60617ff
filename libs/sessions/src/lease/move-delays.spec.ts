import { moveDelays, MOVE_STEP_MS, MOVES_AT_ONCE, MOVES_SPREAD_MS } from './move-delays';

describe(moveDelays.name, () => {
  it('should start a few moves at a time, one step apart', () => {
    const delays = moveDelays(10);
    expect(delays.filter((delay) => delay === 0)).toHaveLength(MOVES_AT_ONCE);
    expect([...new Set(delays)]).toEqual([0, MOVE_STEP_MS, 2 * MOVE_STEP_MS]);
  });

  it('should start them all at once when they fit in one step, and none for an empty worker', () => {
    expect(moveDelays(MOVES_AT_ONCE)).toEqual(new Array(MOVES_AT_ONCE).fill(0));
    expect(moveDelays(0)).toEqual([]);
  });

  it('should spread many over the same span at most, in order', () => {
    for (const count of [25, 200, 1_000]) {
      const delays = moveDelays(count);
      expect(Math.max(...delays)).toBeLessThanOrEqual(MOVES_SPREAD_MS);
      expect(delays).toEqual([...delays].sort((a, b) => a - b));
      expect(new Set(delays).size).toBe(Math.ceil(count / MOVES_AT_ONCE));
    }
    expect(Math.max(...moveDelays(1_000))).toBe(MOVES_SPREAD_MS);
  });

  it('should keep a full step between moves for a worker of 100, not squeeze them into a shorter span', () => {
    // A drain of 100 squeezed into 2 s handed each heir 25 instances a second (ADR 0064).
    const delays = moveDelays(100);
    expect(Math.max(...delays)).toBe(24 * MOVE_STEP_MS);
    expect(delays.filter((delay) => delay === MOVE_STEP_MS)).toHaveLength(MOVES_AT_ONCE);
  });

  it('should start the last move of the largest drain well before the drain budget of 18 s (ADR 0039)', () => {
    expect(Math.max(...moveDelays(5_000))).toBeLessThanOrEqual(18_000 - 10_000);
  });
});
