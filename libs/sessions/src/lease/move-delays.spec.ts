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
});
