import type { SessionWorker } from '@gw/sessions';
import { sleep, waitFor, nextPhone } from './support/stack';
import { WorkerStack, type PairedInstance } from './support/worker-stack';

/** Long on purpose: an instance left to its lease's lapse would take this long to be served again. */
const LEASE_TTL_MS = 30_000;
const INSTANCES = 4;

/** The worker's hand-over of one instance (private): what a rebalance's move and a drain both call. */
type HandOver = (session: unknown, clock: unknown, reason?: string) => Promise<number>;

/**
 * ADR 0043 with ADR 0038: a SIGTERM that arrives while the worker's rebalance is moving an instance away.
 * Over real NATS and Postgres: one worker holds every instance, sync sends flowing on each; a second
 * worker starts, the first begins its first move to it, and the first worker is told to stop while that
 * move is under way. The move is finished (not restarted, not left to lapse), the drain hands every other
 * instance over, and the second worker serves all of them: none held twice, not one send fails, each text
 * at the phone once, every instance on the second worker as the same linked device.
 */
// One attempt: a retry would run on the first attempt's stopped worker.
jest.retryTimes(0);

describe('a SIGTERM during a rebalance move (ADR 0043, ADR 0038)', () => {
  const stack = new WorkerStack('rebalance-stop', { leaseTtlMs: LEASE_TTL_MS, reconcileIntervalMs: 1_000 });
  const workers = stack.workers;

  beforeAll(async () => {
    await stack.start();
    await stack.startWorker('rebalance-stop-a');
  }, 180_000);

  afterAll(() => stack.close());

  it('should finish the move under way, drain the rest to the other worker, with not one send failing and each text at the phone once', async () => {
    const peer = nextPhone('5585');
    await stack.control('POST', '/sim/accounts', { phone: peer });
    const instances: PairedInstance[] = [];
    for (let n = 0; n < INSTANCES; n++) instances.push(await stack.pairInstance(`rebalance-stop-${n}`, '5584'));
    const ids = instances.map(({ id }) => id);
    expect([...(await stack.holders(ids)).values()].every((holder) => holder === 'rebalance-stop-a')).toBe(true);

    // The SIGTERM, sent while the first move's hand-over is under way (the stop is not awaited by the move).
    const a = workers.get('rebalance-stop-a') as SessionWorker;
    const internals = a as unknown as { handOver: HandOver };
    const handOver = internals.handOver.bind(a);
    const reasons: string[] = [];
    let stopped: Promise<void> | undefined;
    let stoppedAt = 0;
    let movedInstance: string | undefined;
    let moveEnded = false;
    let moveEndedBeforeStop: boolean | undefined;
    internals.handOver = (session, clock, reason) => {
      reasons.push(reason ?? 'drain');
      const running = handOver(session, clock, reason);
      if (!stopped && reason?.includes('rebalance')) {
        movedInstance = (session as { instanceId: string }).instanceId;
        void running.finally(() => (moveEnded = true));
        // After this turn: the move has begun (its ops held, its lease about to be handed over).
        setImmediate(() => {
          stoppedAt = Date.now();
          moveEndedBeforeStop = moveEnded;
          stopped = stack.stopWorker('rebalance-stop-a');
        });
      }
      return running;
    };

    // Sync sends on every instance, two at once, until stopped.
    const { sends, stop } = stack.flowSends(instances, peer, 'rebalance-stop', 2);
    await sleep(1_500);
    let handedOverMs = 0;
    let after = new Map<string, string | null>();
    try {
      await stack.startWorker('rebalance-stop-b');
      // (A promise is not what waitFor reads: it would await it.)
      await waitFor(
        async () => stopped !== undefined,
        (begun) => begun,
        LEASE_TTL_MS,
        'a move begun and the worker told to stop during it',
      );
      await stopped;
      after = await waitFor(
        () => stack.holders(ids),
        (map) => [...map.values()].every((holder) => holder === 'rebalance-stop-b'),
        LEASE_TTL_MS,
        'every instance held by the other worker',
      );
      handedOverMs = Date.now() - stoppedAt;
      // Each instance sends through the other worker (a send started once it held them all, answered 200).
      const heldAt = Date.now();
      const sentOnB = () => ids.every((id) => sends.some((send) => send.instance === id && send.startedAt >= heldAt && send.status === 200));
      await waitFor(
        async () => sentOnB(),
        (done) => done,
        30_000,
        'a send on every instance through the other worker',
      );
    } finally {
      await stop();
    }

    const failed = sends.filter((send) => send.status !== 200);
    process.stdout.write(
      `rebalance-stop: SIGTERM during the move of ${movedInstance}; every instance on the other worker ${handedOverMs} ms after it; ` +
        `hand-overs: ${JSON.stringify(reasons)}; ${sends.length} sends, ${failed.length} failed\n`,
    );
    expect(failed).toEqual([]);
    expect(moveEndedBeforeStop).toBe(false);
    // The move under way was finished as a move; the others were drained, each once.
    expect(reasons[0]).toContain('rebalance');
    expect(reasons.filter((reason) => reason.includes('rebalance'))).toHaveLength(1);
    expect(reasons).toHaveLength(INSTANCES);
    // Handed over, not left to lapse.
    expect(handedOverMs).toBeLessThan(LEASE_TTL_MS / 2);
    expect(workers.has('rebalance-stop-a')).toBe(false);
    expect([...after.values()].every((holder) => holder === 'rebalance-stop-b')).toBe(true);

    // Each text answered 200 reaches the phone once; none reaches it twice.
    await stack.expectEachTextOnce(
      peer,
      sends.filter((send) => send.status === 200).map((send) => send.text),
    );
    // Served by the other worker, connected as the same linked device (no new QR).
    for (const { id } of instances) expect(workers.get('rebalance-stop-b')?.manager.get(id)?.currentPhase).toBe('open');
    await stack.expectConnectedAsPaired(instances);
  }, 240_000);
});
