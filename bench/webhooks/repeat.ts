/**
 * `--repeat K`: the whole run K times, each in a process of its own (a fresh relay, receiver and bare client each
 * time), and the median of their key figures. One run's p99 and burst ratio move by more than the goals' margins
 * from run to run on the same code (docs/bench/webhooks.md): the goals are judged on the medians.
 */
import { log } from './options';
import { finite, runTimes, spread } from '../support/repeat';

/** What one run's JSON says, as far as the summary uses it. */
interface RunJson {
  steady: {
    events: number;
    relay: { delivered: number; p50Ms: number | null; p99Ms: number | null; coldStartP99Ms: number | null; p99MsByHalfSecond?: number[] };
  };
  burst: {
    relayVsBare: number;
    relay: { deliveriesPerSecond: number; duplicates: number; outOfOrder: number; machine: { cpuUsPerOp: number } | null };
    bare: { deliveriesPerSecond: number; machine: { cpuUsPerOp: number } | null };
    machineCpuRatio: number | null;
  };
  cpuMsPerThousandDeliveries: { afterStart: { relay: number; bare: number } };
  loadAverage: number[];
  goals: { burstVsBare: number; p99MsAtRate: number };
}

export const REPEAT = (() => {
  const at = process.argv.indexOf('--repeat');
  return at >= 0 ? Math.max(1, Number(process.argv[at + 1]) || 1) : 0;
})();

/** Runs the bench REPEAT times, one after the other, and prints each run's key figures and their medians. */
export async function runRepeated(): Promise<void> {
  const runs = await runTimes<RunJson>(REPEAT, log);
  const numbers = (pick: (run: RunJson) => number | null | undefined) => finite(runs.map(pick));
  const p99 = spread(numbers((run) => run.steady.relay.p99Ms));
  const burstVsBare = spread(numbers((run) => run.burst.relayVsBare));
  const goals = runs[0].goals;
  const everyEventOnce = runs.every(
    (run) => run.steady.relay.delivered === run.steady.events && run.burst.relay.duplicates === 0 && run.burst.relay.outOfOrder === 0,
  );
  process.stdout.write(
    `${JSON.stringify({
      bench: 'webhooks',
      repeat: REPEAT,
      runs: runs.map((run) => ({
        p50Ms: run.steady.relay.p50Ms,
        p99Ms: run.steady.relay.p99Ms,
        coldStartP99Ms: run.steady.relay.coldStartP99Ms,
        firstHalfSecondP99Ms: run.steady.relay.p99MsByHalfSecond?.[0] ?? null,
        burstVsBare: run.burst.relayVsBare,
        relayPerSecond: run.burst.relay.deliveriesPerSecond,
        barePerSecond: run.burst.bare.deliveriesPerSecond,
        machineCpuUsPerDelivery: { relay: run.burst.relay.machine?.cpuUsPerOp ?? null, bare: run.burst.bare.machine?.cpuUsPerOp ?? null },
        relayCpuMsPerThousandAfterStart: run.cpuMsPerThousandDeliveries.afterStart.relay,
        loadAverage: run.loadAverage[0],
      })),
      p99Ms: p99,
      coldStartP99Ms: spread(numbers((run) => run.steady.relay.coldStartP99Ms)),
      burstVsBare,
      machineCpuRatio: spread(numbers((run) => run.burst.machineCpuRatio)),
      goals,
      goal: `the medians over the runs: p99 <= ${goals.p99MsAtRate} ms at the steady rate, burst >= ${goals.burstVsBare} x the bare client's deliveries/s; every event delivered once and in order (issue #38)`,
      met: {
        p99: p99.median !== null && p99.median <= goals.p99MsAtRate && everyEventOnce,
        burstVsBare: burstVsBare.median !== null && burstVsBare.median >= goals.burstVsBare && everyEventOnce,
      },
    })}\n`,
  );
}
