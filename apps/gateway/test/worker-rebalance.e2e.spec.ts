import { metrics } from '@gw/platform';
import { sleep, waitFor, nextPhone } from './support/stack';
import { WorkerStack, type PairedInstance } from './support/worker-stack';

/** Long on purpose: a move that waited for a lease to lapse would take this long. */
const LEASE_TTL_MS = 30_000;
const INSTANCES = 6;

/**
 * ADR 0043: a worker that joins (scale-out, or one back from a restart) takes its share of the running
 * instances. Over real NATS and Postgres: one worker holds every instance, sync sends flowing on each;
 * a second worker starts; the first hands it half of them, one at a time, each as a drain hands an
 * instance over (sends in flight finished, Signal state stored, lease handed over and announced). Not one
 * send fails, each text reaches the phone once, every moved instance is connected on the new worker as
 * the same linked device, and once balanced nothing moves again. Meanwhile the new worker's readiness says it is
 * not settled (ADR 0057) until it holds its half with every session open.
 */
// One attempt: a retry would find the instances already balanced.
jest.retryTimes(0);

describe('a worker that joins takes its share (ADR 0043)', () => {
  const stack = new WorkerStack('rebalance', { leaseTtlMs: LEASE_TTL_MS, reconcileIntervalMs: 1_000 });
  const workers = stack.workers;
  const count = (map: Map<string, string | null>, worker: string) => [...map.values()].filter((holder) => holder === worker).length;

  beforeAll(async () => {
    await stack.start();
    await stack.startWorker('rebalance-a');
  }, 180_000);

  afterAll(() => stack.close());

  it('should hand half of the instances to the new worker, with not one send failing and each text at the phone once', async () => {
    const peer = nextPhone('5583');
    await stack.control('POST', '/sim/accounts', { phone: peer });
    const instances: PairedInstance[] = [];
    for (let n = 0; n < INSTANCES; n++) instances.push(await stack.pairInstance(`rebalance-${n}`, '5582'));
    const ids = instances.map(({ id }) => id);
    expect(count(await stack.holders(ids), 'rebalance-a')).toBe(INSTANCES);
    const movesBefore = await movesCounted();

    // Sync sends on every instance, two at once, until stopped.
    const { sends, stop } = stack.flowSends(instances, peer, 'rebalance', 2);
    await sleep(2_000);
    let joinedAt = 0;
    let balancedMs = 0;
    let balanced = new Map<string, string | null>();
    let later = new Map<string, string | null>();
    let moved: typeof instances = [];
    let sentOnB = () => false;
    let settledSeen: Settled = { reasons: [], holdersAtSettle: new Map(), openAtSettle: 0, settledAfterMs: NaN };
    // ADR 0057: b's readiness, asked every 50 ms from its start, until it first says settled.
    const watchSettling = async (workerId: string): Promise<Settled> => {
      const reasons = new Set<string>();
      const startedAt = Date.now();
      for (;;) {
        const worker = workers.get(workerId)!;
        const error = await worker.settled().then(
          () => null,
          (rejected: Error) => rejected,
        );
        if (!error) {
          const holdersAtSettle = await stack.holders(ids);
          const openAtSettle = instances.filter(({ id }) => worker.manager.get(id)?.currentPhase === 'open').length;
          return { reasons: [...reasons], holdersAtSettle, openAtSettle, settledAfterMs: Date.now() - startedAt };
        }
        reasons.add(error.message.replace(/\d+/g, 'N'));
        if (Date.now() - startedAt > LEASE_TTL_MS) throw new Error(`${workerId} not settled: ${[...reasons].join('; ')}`);
        await sleep(50);
      }
    };
    try {
      joinedAt = Date.now();
      await stack.startWorker('rebalance-b');
      const watching = watchSettling('rebalance-b');
      balanced = await waitFor(
        () => stack.holders(ids),
        (map) => count(map, 'rebalance-b') === INSTANCES / 2 && count(map, 'rebalance-a') === INSTANCES / 2,
        LEASE_TTL_MS,
        'half of the instances held by the new worker',
      );
      balancedMs = Date.now() - joinedAt;
      settledSeen = await watching;
      moved = instances.filter(({ id }) => balanced.get(id) === 'rebalance-b');
      // Each moved instance sends through its new worker (a send started once it was balanced, answered 200).
      const balancedAt = Date.now();
      sentOnB = () => moved.every(({ id }) => sends.some((send) => send.instance === id && send.startedAt >= balancedAt && send.status === 200));
      const deadline = Date.now() + 30_000;
      while (!sentOnB() && Date.now() < deadline) await sleep(100);
      // Balanced stays balanced: a few reconcile intervals later, nothing moved again.
      await sleep(4_000);
      later = await stack.holders(ids);
    } finally {
      await stop();
    }

    const failed = sends.filter((send) => send.status !== 200);
    const longestDuringMoves = Math.max(0, ...sends.filter((send) => send.endedAt >= joinedAt).map((send) => send.endedAt - send.startedAt));
    process.stdout.write(
      `rebalance: ${moved.length} of ${INSTANCES} instances moved to the new worker within ${balancedMs} ms of its start; ` +
        `${sends.length} sends, ${failed.length} failed, the longest after the join ${longestDuringMoves} ms\n`,
    );
    process.stdout.write(
      `rebalance: the new worker settled ${settledSeen.settledAfterMs} ms after its start; before, it said: ${settledSeen.reasons.join(' | ')}\n`,
    );
    // Not ready before it took its part and opened it: it said what it waited for, and settled holding its half, all open.
    expect(settledSeen.reasons.some((reason) => reason.endsWith("still to come (over another worker's share, or held by nobody)"))).toBe(true);
    expect(count(settledSeen.holdersAtSettle, 'rebalance-b')).toBe(INSTANCES / 2);
    expect(settledSeen.openAtSettle).toBe(INSTANCES / 2);
    expect(sentOnB()).toBe(true);
    expect(failed).toEqual([]);
    // Handed over, not left to lapse.
    expect(balancedMs).toBeLessThan(LEASE_TTL_MS / 2);
    expect(later).toEqual(balanced);
    expect((await movesCounted()) - movesBefore).toBe(INSTANCES / 2);

    // Each text answered 200 reaches the phone once; none reaches it twice.
    await stack.expectEachTextOnce(
      peer,
      sends.filter((send) => send.status === 200).map((send) => send.text),
    );
    // Served by the new worker, connected as the same linked device (no new QR).
    for (const { id } of moved) {
      expect(workers.get('rebalance-b')?.manager.get(id)?.currentPhase).toBe('open');
      expect(workers.get('rebalance-a')?.manager.get(id)).toBeUndefined();
    }
    await stack.expectConnectedAsPaired(moved);
  }, 240_000);
});

interface Settled {
  reasons: string[];
  holdersAtSettle: Map<string, string | null>;
  openAtSettle: number;
  settledAfterMs: number;
}

/** The moves this process's workers counted (wa_gateway_worker_instance_moves_total{outcome="moved"}). */
async function movesCounted(): Promise<number> {
  const metric = await metrics().registry.getSingleMetric('wa_gateway_worker_instance_moves_total')?.get();
  return metric?.values.find((value) => value.labels.outcome === 'moved')?.value ?? 0;
}
