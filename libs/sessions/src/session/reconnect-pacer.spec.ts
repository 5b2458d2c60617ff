import { ReconnectPacer } from './reconnect-pacer';

describe(ReconnectPacer.name, () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  const pacer = (scoutMinWaiting = 3) => new ReconnectPacer({ resumeJitterMs: 1_000, scoutIntervalMs: 2_000, scoutMinWaiting, random: () => 0.5 });

  it('should run a wait after its delay, and only its latest one', () => {
    const sut = pacer();
    const key = {};
    const runs: string[] = [];
    sut.wait(key, 5_000, () => runs.push('old'));
    sut.wait(key, 3_000, () => runs.push('new'));
    jest.advanceTimersByTime(3_000);
    expect(runs).toEqual(['new']);
    jest.advanceTimersByTime(10_000);
    expect(runs).toEqual(['new']);
    const cancelled = sut.wait(key, 1_000, () => runs.push('cancelled'));
    cancelled.cancel();
    jest.advanceTimersByTime(2_000);
    expect(runs).toEqual(['new']);
    expect(sut.stats.waiting).toBe(0);
  });

  it('should cut every long backoff to the short jitter when the server is reachable again, at most once per interval', () => {
    const sut = pacer(100); // no scout here
    const runs: number[] = [];
    for (let n = 0; n < 5; n++) sut.wait({}, 30_000, () => runs.push(n));
    const soon = {};
    sut.wait(soon, 400, () => runs.push(99)); // already shorter than the jitter: left as it is
    jest.advanceTimersByTime(100);
    sut.reachable();
    jest.advanceTimersByTime(300);
    expect(runs).toEqual([99]);
    jest.advanceTimersByTime(500); // random 0.5 × 1 s
    expect(runs).toEqual([99, 0, 1, 2, 3, 4]);
    expect(sut.stats.cuts).toBe(5);

    // A second signal within the interval cuts nothing (a few instances failing on their own).
    sut.wait({}, 30_000, () => runs.push(7));
    sut.reachable();
    jest.advanceTimersByTime(1_000);
    expect(runs).toHaveLength(6);
    jest.advanceTimersByTime(1_000);
    sut.reachable();
    jest.advanceTimersByTime(500);
    expect(runs).toEqual([99, 0, 1, 2, 3, 4, 7]);
  });

  it('should try the session due first once per interval while many wait, and never for one or two', () => {
    const many = pacer(3);
    const runs: number[] = [];
    [30_000, 20_000, 25_000].forEach((delay, n) => many.wait({}, delay, () => runs.push(n)));
    jest.advanceTimersByTime(2_000);
    expect(runs).toEqual([1]); // the one due first
    jest.advanceTimersByTime(2_000);
    expect(runs).toEqual([1]); // two long waits left: below scoutMinWaiting
    expect(many.stats.scouts).toBe(1);

    const few = pacer(3);
    const alone: number[] = [];
    few.wait({}, 30_000, () => alone.push(0));
    few.wait({}, 30_000, () => alone.push(1));
    jest.advanceTimersByTime(29_000);
    expect(alone).toEqual([]);
  });

  it('should not scout while the worker is trying anyway', () => {
    const sut = pacer(3);
    const runs: number[] = [];
    for (let n = 0; n < 4; n++) sut.wait({}, 30_000, () => runs.push(n));
    // A try every second (its backoff is short): the scout stays quiet.
    const busy = {};
    const again = () => sut.wait(busy, 1_000, () => (runs.push(-1), again()));
    again();
    jest.advanceTimersByTime(10_000);
    expect(runs.filter((n) => n >= 0)).toEqual([]);
    expect(sut.stats.scouts).toBe(0);
  });
});
