import { HandshakeGate } from './handshake-gate';

describe(HandshakeGate.name, () => {
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('should let at most `limit` handshakes run at once and pass each freed slot to the next waiter in order', async () => {
    const sut = new HandshakeGate(2, 60_000);
    const order: number[] = [];
    const releases: Array<() => void> = [];
    const tickets = [0, 1, 2, 3].map((n) => sut.acquire().then((release) => (order.push(n), releases.push(release))));
    await tick();
    expect(order).toEqual([0, 1]);
    expect(sut.stats).toEqual({ active: 2, waiting: 2, peak: 2 });
    releases[0]();
    releases[0](); // twice: still one slot
    await tick();
    expect(order).toEqual([0, 1, 2]);
    releases[1]();
    await Promise.all(tickets);
    expect(order).toEqual([0, 1, 2, 3]);
    releases[2]();
    releases[3]();
    expect(sut.stats).toEqual({ active: 0, waiting: 0, peak: 2 });
  });

  it('should free a slot by itself after holdMs (a handshake that never says how it ended)', async () => {
    jest.useFakeTimers();
    try {
      const sut = new HandshakeGate(1, 1_000);
      await sut.acquire();
      let second = false;
      const next = sut.acquire().then(() => (second = true));
      await Promise.resolve();
      expect(second).toBe(false);
      jest.advanceTimersByTime(1_000);
      await next;
      expect(second).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('should hand the hold end to onHoldEnd, keeping the slot until it releases', async () => {
    jest.useFakeTimers();
    try {
      const sut = new HandshakeGate(1, 1_000);
      const ended: Array<() => void> = [];
      await sut.acquire((release) => ended.push(release));
      let second = false;
      const next = sut.acquire().then(() => (second = true));
      jest.advanceTimersByTime(1_000);
      await Promise.resolve();
      // The holder was told; its socket is still handshaking until it closes it.
      expect(ended).toHaveLength(1);
      expect(second).toBe(false);
      expect(sut.stats.active).toBe(1);
      ended[0]();
      await next;
      expect(second).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('should release by itself when onHoldEnd throws', async () => {
    jest.useFakeTimers();
    try {
      const sut = new HandshakeGate(1, 1_000);
      await sut.acquire(() => {
        throw new Error('boom');
      });
      const next = sut.acquire();
      jest.advanceTimersByTime(1_000);
      await next;
      expect(sut.stats).toEqual({ active: 1, waiting: 0, peak: 1 });
    } finally {
      jest.useRealTimers();
    }
  });
});
