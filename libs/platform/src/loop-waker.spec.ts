import { LoopWaker } from './loop-waker';

describe('LoopWaker', () => {
  it('sleeps until the time runs out when nobody wakes it', async () => {
    const waker = new LoopWaker();
    const started = Date.now();
    expect(await waker.sleep(30)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('ends a sleep at once on wake', async () => {
    const waker = new LoopWaker();
    const started = Date.now();
    const slept = waker.sleep(10_000);
    waker.wake();
    expect(await slept).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('keeps a wake that came during the pass for the next sleep, and begin() consumes it', async () => {
    const waker = new LoopWaker();
    waker.begin();
    waker.wake();
    expect(waker.woken).toBe(true);
    expect(await waker.sleep(10_000)).toBe(true);
    waker.begin();
    expect(waker.woken).toBe(false);
    expect(await waker.sleep(20)).toBe(false);
  });

  it('a wake after a sleep timed out does not end a later sleep that began a new pass', async () => {
    const waker = new LoopWaker();
    expect(await waker.sleep(5)).toBe(false);
    waker.begin();
    const started = Date.now();
    expect(await waker.sleep(30)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });
});
