import { forEachAtMost } from './at-most';

describe('forEachAtMost', () => {
  it('runs every item once, never more than the bound at a time, taking them in order', async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    await forEachAtMost(
      Array.from({ length: 10 }, (_, n) => n),
      3,
      async (n) => {
        started.push(n);
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 2));
        running--;
      },
    );
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(most).toBe(3);
  });

  it('does nothing for no items', async () => {
    await forEachAtMost([], 4, () => Promise.reject(new Error('never called')));
  });
});
