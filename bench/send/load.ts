/** The load both sides are measured under: N operations at a concurrency, timed, with the machine's CPU per process meanwhile. */
import { machineCpuBetween, machineCpuMark } from '../support/processes';
import { CONCURRENCY, INSTANCES, type LoadResult, log, N, round, SETTLE, sleep, WARMUP } from './options';

/**
 * Runs `count` operations with at most CONCURRENCY in flight; operation i goes to instance i % INSTANCES
 * and peer i % PEERS (so each instance always talks to the same peer: warm-up covers every pair). With
 * `ratePerSecond`, operation i starts no earlier than i / rate seconds in (the floor's hops, at ours' rate).
 */
export async function drive(count: number, operation: (index: number) => Promise<void>, ratePerSecond?: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let failed = 0;
  let firstError: string | undefined;
  let next = 0;
  const machineBefore = machineCpuMark();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) {
        const index = next++;
        // Paced: operation i starts no earlier than i / rate seconds in.
        const wait = ratePerSecond ? (index * 1000) / ratePerSecond - Number(process.hrtime.bigint() - started) / 1e6 : 0;
        if (wait > 0) await sleep(wait);
        const t0 = process.hrtime.bigint();
        try {
          await operation(index);
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        } catch (error) {
          failed++;
          firstError ??= String((error as Error)?.message ?? error);
        }
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = machineCpuBetween(machineBefore, machineCpuMark(), count);
  const machine = used
    ? {
        machineCpuMsPerSend: round(used.cpuUsPerOp / 1000, 2),
        machineBusyPercent: round(used.busyPercent),
        machineCpuMsPerSendBy: Object.fromEntries(used.cpuUsPerOpBy.filter(([, us]) => us >= 10).map(([label, us]) => [label, round(us / 1000, 2)])),
      }
    : {};
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies.length ? round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]) : 0);
  return {
    sent: latencies.length,
    failed,
    ...(firstError ? { firstError } : {}),
    seconds: round(seconds, 2),
    perSecond: round(latencies.length / seconds),
    p50Ms: at(0.5),
    p90Ms: at(0.9),
    p99Ms: at(0.99),
    maxMs: latencies.length ? round(latencies[latencies.length - 1]) : 0,
    ...machine,
  };
}

export async function warmUpThenMeasure(operation: (index: number) => Promise<void>, afterWarmUp?: () => Promise<void>): Promise<LoadResult> {
  for (let round = 0; round < WARMUP; round++) {
    const warm = await drive(INSTANCES, operation);
    log(`warm-up round ${round + 1}: ${warm.sent} sent, ${warm.failed} failed${warm.firstError ? ` (${warm.firstError})` : ''}, p50 ${warm.p50Ms} ms`);
  }
  await afterWarmUp?.();
  if (SETTLE > 0) {
    const settled = await drive(SETTLE, operation);
    log(`settling: ${settled.sent} sent, ${settled.failed} failed, ${settled.perSecond}/s`);
  }
  log(`measuring ${N} sends, concurrency ${CONCURRENCY}`);
  return drive(N, operation);
}
