import { ConnectionLostError, InProcessBus } from '@gw/bus';
import { ErrorCode, RpcError, Subjects } from '@gw/contracts';
import { HOLDER_CHECK_MS, LOST_AFTER_CHECKS, TAKEOVER_RETRY_MS, TakeoverRequester } from './takeover-requester';

/** A bus whose first request to the instance was in flight when its NATS server was lost. */
function busLosingItsServerOnce(): { bus: InProcessBus; sent: () => number } {
  const bus = new InProcessBus();
  let sent = 0;
  const request = bus.request.bind(bus);
  bus.request = (<T>(subject: string, data: unknown, options: { timeoutMs: number }) => {
    if (subject.endsWith('.send') && ++sent === 1) return Promise.reject(new ConnectionLostError(subject));
    return request<T>(subject, data, options);
  }) as InProcessBus['request'];
  bus.subscribe('instance.i1.send', async () => ({ messageId: 'm1', status: 'Sent' }));
  return { bus, sent: () => sent };
}

describe(TakeoverRequester.name, () => {
  describe('requestAcrossTakeover', () => {
    it('should send again a request whose NATS server was lost while it was in flight', async () => {
      const { bus, sent } = busLosingItsServerOnce();
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000 });
      await expect(sut.requestAcrossTakeover('i1', 'send', {} as never, 500)).resolves.toEqual({ messageId: 'm1', status: 'Sent' });
      expect(sent()).toBe(2);
    });

    it("should send again at once a request its holder's lost NATS server dropped, when the holder says it rejoined (issue 39)", async () => {
      // The holder's first request never comes back (routed through the server it lost); it rejoins the bus
      // on another server 100 ms later and says so. The request's timeout (10 s) is not waited out.
      const bus = new InProcessBus();
      let tries = 0;
      bus.subscribe('instance.i1.send', async () => {
        tries += 1;
        if (tries === 1) return new Promise(() => undefined);
        return { messageId: 'm1', status: 'Sent' };
      });
      bus.subscribe('instance.i1.status', async () => ({ status: 'connected', loggedIn: true }));
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000 });
      const started = Date.now();
      setTimeout(() => bus.publish(Subjects.holderRejoined, { workerId: 'w1', instanceIds: ['i2', 'i1'] }), 100);
      await expect(sut.requestAcrossTakeover('i1', 'send', {} as never, 10_000)).resolves.toEqual({ messageId: 'm1', status: 'Sent' });
      expect(tries).toBe(2);
      expect(Date.now() - started).toBeLessThan(100 + TAKEOVER_RETRY_MS + 400);
    });

    /**
     * A holder that keeps the keys of the sends it took (and whether it answered them), behind a bus that loses the
     * first send (`lose: 'request'`: on its way, a route through a NATS server killed at that instant) or its answer
     * (`'answer'`: on the way back). `keepsKeys: false`: a holder of an older version.
     */
    const holderBehindALossyBus = (keepsKeys: boolean, workMs = 0, lose: 'request' | 'answer' = 'request') => {
      const bus = new InProcessBus();
      const taken = new Set<string>();
      const answered = new Set<string>();
      let lost = 0;
      let tries = 0;
      const request = bus.request.bind(bus);
      // Lost: never answered; the bus's own timeout is all the requester hears.
      const timeout = <T>(subject: string, timeoutMs: number) =>
        new Promise<T>((_, reject) => setTimeout(() => reject(new RpcError(ErrorCode.Timeout, `request ${subject} timed out`)), timeoutMs));
      bus.request = (<T>(subject: string, data: unknown, options: { timeoutMs: number }) => {
        if (subject.endsWith('.send') && ++lost === 1) {
          if (lose === 'answer') void request<T>(subject, data, options).catch(() => undefined);
          return timeout<T>(subject, options.timeoutMs);
        }
        return request<T>(subject, data, options);
      }) as InProcessBus['request'];
      bus.subscribe('instance.i1.send', async (data) => {
        tries += 1;
        const key = `send:${(data as { messageId: string }).messageId}`;
        taken.add(key);
        await new Promise((resolve) => setTimeout(resolve, workMs));
        answered.add(key);
        return { messageId: 'm1', status: 'Sent' };
      });
      bus.subscribe('instance.i1.status', async (data) => {
        const awaiting = (data as { awaiting?: string }).awaiting;
        const said = keepsKeys && awaiting ? { received: taken.has(awaiting), answered: answered.has(awaiting) } : {};
        return { status: 'connected', loggedIn: true, jid: null, ...said };
      });
      return { bus, tries: () => tries };
    };

    it.each([
      // Two checks a second apart said "not taken"; then the second try.
      ['its live holder says it never took (lost on its way)', 'request' as const, 1],
      // The holder ran it twice (a real holder answers the second try from its ledger: relayed once).
      ['its holder answered when the answer never came back', 'answer' as const, 2],
    ])('should send again a send %s, not wait out its timeout', async (_case, lose, expectedTries) => {
      const { bus, tries } = holderBehindALossyBus(true, 0, lose);
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 20_000 });
      const started = Date.now();
      await expect(sut.requestAcrossTakeover('i1', 'send', { messageId: 'm1' } as never, 10_000)).resolves.toEqual({ messageId: 'm1', status: 'Sent' });
      expect(tries()).toBe(expectedTries);
      // The timeout was 10 s.
      expect(Date.now() - started).toBeLessThan(LOST_AFTER_CHECKS * HOLDER_CHECK_MS + TAKEOVER_RETRY_MS + 700);
    });

    it('should wait for a send its holder took, however long it runs, and for one whose holder keeps no keys', async () => {
      // Taken and slow (3 s, three checks): not tried again.
      const slow = holderBehindALossyBus(true, 3_000);
      const sut = new TakeoverRequester(slow.bus, { failoverWaitMs: 20_000 });
      void sut.requestAcrossTakeover('i1', 'send', { messageId: 'm0' } as never, 100).catch(() => undefined);
      await expect(sut.requestAcrossTakeover('i1', 'send', { messageId: 'm1' } as never, 10_000)).resolves.toMatchObject({ status: 'Sent' });
      expect(slow.tries()).toBe(1);
      // An older holder (no `received` in its answer): the lost send waits for its timeout, as before.
      const older = holderBehindALossyBus(false);
      const started = Date.now();
      await expect(
        new TakeoverRequester(older.bus, { failoverWaitMs: 20_000 }).requestAcrossTakeover('i1', 'send', { messageId: 'm1' } as never, 3_000),
      ).rejects.toMatchObject({
        code: ErrorCode.Timeout,
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
      expect(older.tries()).toBe(0);
    }, 15_000);

    it('should stop checking the holder for a try abandoned on its rejoin notice, not until that try times out', async () => {
      const bus = new InProcessBus();
      let tries = 0;
      let checks = 0;
      bus.subscribe('instance.i1.send', async () => {
        tries += 1;
        if (tries === 1) return new Promise(() => undefined);
        return { messageId: 'm1', status: 'Sent' };
      });
      bus.subscribe('instance.i1.status', async () => {
        checks += 1;
        return { status: 'connected', loggedIn: true };
      });
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000 });
      setTimeout(() => bus.publish(Subjects.holderRejoined, { workerId: 'w1', instanceIds: ['i1'] }), 100);
      await expect(sut.requestAcrossTakeover('i1', 'send', {} as never, 10_000)).resolves.toEqual({ messageId: 'm1', status: 'Sent' });
      // The abandoned try would have checked its holder every HOLDER_CHECK_MS until its 10 s timeout.
      await new Promise((resolve) => setTimeout(resolve, 2.5 * HOLDER_CHECK_MS));
      expect(checks).toBe(0);
    });

    it("should not abandon a request over another instance's holder rejoining, nor one that is not safe to repeat", async () => {
      const bus = new InProcessBus();
      let tries = 0;
      bus.subscribe('instance.i1.send', async () => {
        tries += 1;
        await new Promise((resolve) => setTimeout(resolve, 300));
        return { messageId: 'm1', status: 'Sent' };
      });
      bus.subscribe('instance.i1.presence', async () => {
        tries += 1;
        await new Promise((resolve) => setTimeout(resolve, 300));
        return { ok: true };
      });
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000, heldRecently: async () => true });
      setTimeout(() => bus.publish(Subjects.holderRejoined, { workerId: 'w2', instanceIds: ['i2'] }), 50);
      await expect(sut.requestAcrossTakeover('i1', 'send', {} as never, 5_000)).resolves.toEqual({ messageId: 'm1', status: 'Sent' });
      setTimeout(() => bus.publish(Subjects.holderRejoined, { workerId: 'w1', instanceIds: ['i1'] }), 50);
      await expect(sut.requestAcrossHandOver('i1', 'presence', {} as never, 5_000)).resolves.toEqual({ ok: true });
      expect(tries).toBe(2);
    });
  });

  describe('requestAcrossHandOver (issue 39)', () => {
    /** An instance nobody answers for `gapMs` (moving between workers), then held by a worker that runs its ops. */
    function movingInstance(gapMs: number, refusal: RpcError): { bus: InProcessBus; ran: () => number } {
      const bus = new InProcessBus();
      const since = Date.now();
      let ran = 0;
      bus.subscribe('instance.i1.presence', async () => {
        if (Date.now() - since < gapMs) throw refusal;
        ran += 1;
        return { ok: true };
      });
      return { bus, ran: () => ran };
    }

    it('should try again a request refused before it started while the instance moves, until the heir runs it', async () => {
      const { bus, ran } = movingInstance(600, new RpcError(ErrorCode.NoSession, 'handing over', { notRun: true }));
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000, heldRecently: async () => true });
      await expect(sut.requestAcrossHandOver('i1', 'presence', {} as never, 500)).resolves.toEqual({ ok: true });
      expect(ran()).toBe(1);
    });

    it("should try again as soon as the instance's new holder says it arrived, not at the next retry (issue 39)", async () => {
      const bus = new InProcessBus();
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000, heldRecently: async () => true });
      const started = Date.now();
      // Nobody holds the instance (its old holder handed it over); 30 ms later the heir subscribes and says so.
      setTimeout(() => {
        bus.subscribe('instance.i1.presence', async () => ({ ok: true, at: Date.now() - started }));
        bus.publish(Subjects.instanceArrived('i1'), null);
      }, 30);
      const answer = await sut.requestAcrossHandOver<'presence'>('i1', 'presence', {} as never, 500);
      expect((answer as unknown as { at: number }).at).toBeLessThan(TAKEOVER_RETRY_MS - 50);
    });

    it('should still try again at the retry interval when no notice comes (a notice missed or lost)', async () => {
      const bus = new InProcessBus();
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000, heldRecently: async () => true });
      const started = Date.now();
      setTimeout(() => bus.subscribe('instance.i1.presence', async () => ({ ok: true, at: Date.now() - started })), 30);
      const answer = await sut.requestAcrossHandOver<'presence'>('i1', 'presence', {} as never, 500);
      expect((answer as unknown as { at: number }).at).toBeGreaterThanOrEqual(TAKEOVER_RETRY_MS - 5);
    });

    it('should not repeat a NoSession that may have started (not marked not run)', async () => {
      const { bus } = movingInstance(600, new RpcError(ErrorCode.NoSession, 'the session ended under the op'));
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000, heldRecently: async () => true });
      await expect(sut.requestAcrossHandOver('i1', 'presence', {} as never, 500)).rejects.toMatchObject({ code: ErrorCode.NoSession });
    });

    it('should answer NoSession at once for an instance nobody held recently', async () => {
      const bus = new InProcessBus();
      let asked = 0;
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000, heldRecently: async () => (asked++, false) });
      const started = Date.now();
      await expect(sut.requestAcrossHandOver('i1', 'presence', {} as never, 500)).rejects.toMatchObject({ code: ErrorCode.NoSession, notRun: true });
      expect(asked).toBe(1);
      expect(Date.now() - started).toBeLessThan(TAKEOVER_RETRY_MS);
    });
  });

  describe('request', () => {
    it('should answer a timeout for a request that cannot be repeated', async () => {
      const { bus } = busLosingItsServerOnce();
      const sut = new TakeoverRequester(bus, { failoverWaitMs: 5_000 });
      const error = await sut.request('i1', 'send', {} as never, 500).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RpcError);
      expect(error).toMatchObject({ code: ErrorCode.Timeout });
    });
  });
});
