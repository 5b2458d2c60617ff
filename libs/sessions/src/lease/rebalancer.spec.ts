import { createLogger } from '@gw/platform';
import { Rebalancer } from './rebalancer';

const logger = createLogger('rebalancer-spec', 'silent');

/** A worker holding `held` instances over a share of `share`: each move takes one away. */
function worker(held: string[], share: number, options: { failOn?: string; moveMs?: number } = {}) {
  const holding = [...held];
  const moved: string[] = [];
  const asked: number[] = [];
  let concurrent = 0;
  let maxConcurrent = 0;
  const deps = {
    surplus: jest.fn(async () => {
      const surplus = Math.max(0, holding.length - share);
      asked.push(surplus);
      return surplus;
    }),
    next: (): string | undefined => holding[0],
    move: jest.fn(async (instanceId: string) => {
      concurrent += 1;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      await new Promise((resolve) => setTimeout(resolve, options.moveMs ?? 1));
      concurrent -= 1;
      if (instanceId === options.failOn) return false;
      holding.splice(holding.indexOf(instanceId), 1);
      moved.push(instanceId);
      return true;
    }),
    gapMs: 1,
    logger,
  };
  return { deps, holding, moved, asked, maxConcurrent: () => maxConcurrent };
}

describe(Rebalancer.name, () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `inst-${i}`);

  it('should move the surplus one instance at a time, asking for the surplus again before each move, then stop', async () => {
    const w = worker(ids(10), 6);
    const rebalancer = new Rebalancer(w.deps);
    rebalancer.nudge();
    rebalancer.nudge(); // one rebalance at a time: a second nudge joins the first
    await rebalancer.settled();
    expect(w.moved).toEqual(['inst-0', 'inst-1', 'inst-2', 'inst-3']);
    expect(w.holding).toHaveLength(6);
    expect(w.asked).toEqual([4, 3, 2, 1, 0]);
    expect(w.maxConcurrent()).toBe(1);
  });

  it('should stop at a move that fails, and start again at the next nudge', async () => {
    const w = worker(ids(8), 4, { failOn: 'inst-1' });
    const rebalancer = new Rebalancer(w.deps);
    rebalancer.nudge();
    await rebalancer.settled();
    expect(w.moved).toEqual(['inst-0']);
    w.deps.next = () => w.holding.find((id) => id !== 'inst-1');
    rebalancer.nudge();
    await rebalancer.settled();
    expect(w.holding).toHaveLength(4);
  });

  it('should stop when the surplus cannot be read, or nothing can move', async () => {
    const w = worker(ids(8), 4);
    w.deps.surplus.mockRejectedValueOnce(new Error('database gone'));
    const rebalancer = new Rebalancer(w.deps);
    rebalancer.nudge();
    await rebalancer.settled();
    expect(w.deps.move).not.toHaveBeenCalled();
    w.deps.next = () => undefined;
    rebalancer.nudge();
    await rebalancer.settled();
    expect(w.deps.move).not.toHaveBeenCalled();
  });

  it('should finish the move under way at stop(), start none after it, and take no nudge once stopped', async () => {
    const w = worker(ids(10), 2, { moveMs: 50 });
    const rebalancer = new Rebalancer({ ...w.deps, gapMs: 10_000 });
    rebalancer.nudge();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(rebalancer.moving).toBe('inst-0');
    const startedStop = Date.now();
    await rebalancer.stop();
    // The gap after the move does not hold the stop back.
    expect(Date.now() - startedStop).toBeLessThan(5_000);
    expect(w.moved).toEqual(['inst-0']);
    expect(rebalancer.moving).toBeNull();
    rebalancer.nudge();
    await rebalancer.settled();
    expect(w.moved).toEqual(['inst-0']);
  });
});
