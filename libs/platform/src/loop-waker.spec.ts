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

  it('backs off 100 ms after a failure, doubling with each in a row up to the cap, and from 100 ms again after a success', async () => {
    const waker = new LoopWaker();
    const waited = async (maxMs: number) => {
      const started = Date.now();
      await waker.backoff(maxMs);
      return Date.now() - started;
    };
    expect(await waited(250)).toBeGreaterThanOrEqual(95);
    const second = await waited(250);
    expect(second).toBeGreaterThanOrEqual(195);
    expect(await waited(250)).toBeGreaterThanOrEqual(245);
    waker.succeeded();
    expect(await waited(250)).toBeLessThan(second - 50);
  });

  it('a wake does not end a backoff; halt() does, at once', async () => {
    const waker = new LoopWaker();
    let ended = false;
    const backoff = waker.backoff(10_000).then(() => (ended = true));
    waker.wake();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ended).toBe(false);
    const started = Date.now();
    waker.halt();
    await backoff;
    expect(Date.now() - started).toBeLessThan(1_000);
    // And counts as a wake for the next sleep.
    expect(await waker.sleep(10_000)).toBe(true);
  });

  it('lets I/O run before a sleep that a wake already ended returns', async () => {
    const waker = new LoopWaker();
    waker.wake();
    let ran = false;
    setImmediate(() => (ran = true));
    expect(await waker.sleep(10_000)).toBe(true);
    expect(ran).toBe(true);
  });
});
