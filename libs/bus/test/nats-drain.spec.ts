import { ErrorCode } from '@gw/contracts';
import { testNatsUrl } from '@gw/testing';
import { type BusSubscription, NatsBus } from '@gw/bus';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Issue #39: a session worker that drains must answer every request NATS routed to it. A plain
 * unsubscribe drops, at the client, messages the server routed before it saw the UNSUB; their
 * requesters wait out their whole timeout (a sync send's 504). Over the machine's NATS, two
 * connections as two processes would have.
 */
describe('NatsBus drain (issue 39)', () => {
  let url: string | null;
  const prefix = `drain${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const open: NatsBus[] = [];
  const connect = async (name: string, options?: { closeWaitMs?: number }) => {
    const bus = await NatsBus.connect(url!, name, options);
    open.push(bus);
    return bus;
  };

  beforeAll(async () => {
    url = await testNatsUrl();
  });
  afterAll(async () => {
    for (const bus of open) await bus.close().catch(() => undefined);
  });

  const itIf = (title: string, fn: () => Promise<void>) =>
    it(title, async () => {
      if (!url) return console.warn(`skipped (no NATS): ${title}`);
      await fn();
    });

  itIf('should answer a request routed to a subscription before its drain reached the server', async () => {
    const worker = await connect('drain-test-worker');
    const gateway = await connect('drain-test-gateway');
    const seen: number[] = [];
    let subscription: BusSubscription | null = null;
    let drained: Promise<void> | null = null;
    subscription = worker.subscribe(`${prefix}.instance.a.send`, async (data) => {
      const n = (data as { n: number }).n;
      seen.push(n);
      // The first message stops the subscription while the others are already on their way.
      if (n === 0) drained = subscription!.drain();
      await sleep(20);
      return { n };
    });
    await worker.ping();
    const answers = await Promise.allSettled(
      [0, 1, 2, 3, 4].map((n) => gateway.request<{ n: number }>(`${prefix}.instance.a.send`, { n }, { timeoutMs: 2_000 })),
    );
    await drained;
    // Every request that reached the worker got its answer; none waited out its timeout.
    for (const answer of answers) {
      if (answer.status === 'fulfilled') expect(seen).toContain(answer.value.n);
      else expect((answer.reason as { code: string }).code).toBe(ErrorCode.NoSession);
    }
    expect(answers.filter((answer) => answer.status === 'rejected' && (answer.reason as { code: string }).code === ErrorCode.Timeout)).toEqual([]);
    expect(seen.length).toBeGreaterThan(1);
    // Drained: nobody subscribes any more.
    await expect(gateway.request(`${prefix}.instance.a.send`, { n: 9 }, { timeoutMs: 2_000 })).rejects.toMatchObject({ code: ErrorCode.NoSession });
  });

  itIf('should answer the requests it took before its connection closes', async () => {
    const worker = await connect('drain-test-worker-2', { closeWaitMs: 5_000 });
    const gateway = await connect('drain-test-gateway-2');
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    worker.subscribe(`${prefix}.instance.b.send`, async () => {
      started();
      await sleep(300);
      return { sent: true };
    });
    await worker.ping();
    const answer = gateway.request<{ sent: boolean }>(`${prefix}.instance.b.send`, {}, { timeoutMs: 3_000 });
    await running;
    const closedAt = Date.now();
    await worker.close();
    await expect(answer).resolves.toEqual({ sent: true });
    // It waited for the handler (not its whole bound).
    expect(Date.now() - closedAt).toBeLessThan(3_000);
  });

  itIf('should close after closeWaitMs when a handler never answers', async () => {
    const worker = await connect('drain-test-worker-3', { closeWaitMs: 200 });
    const gateway = await connect('drain-test-gateway-3');
    worker.subscribe(`${prefix}.instance.c.send`, () => new Promise(() => undefined));
    await worker.ping();
    const answer = gateway.request(`${prefix}.instance.c.send`, {}, { timeoutMs: 1_500 });
    await sleep(100);
    const closedAt = Date.now();
    await worker.close();
    expect(Date.now() - closedAt).toBeLessThan(1_000);
    await expect(answer).rejects.toMatchObject({ code: ErrorCode.Timeout });
  });
});
