/** `--repeat K`: the whole run K times, each in a process of its own, and the median of their key figures. */
import { FLOOR_RATIO_GOAL, log, REPEAT } from './options';
import { finite, median, runTimes, spread } from '../support/repeat';

/** What one run's JSON says, as far as the summary uses it. */
interface RunJson {
  ratio: number;
  floorRatio: number | null;
  bare: { perSecond: number };
  ours: { perSecond: number; failed: number; machineCpuMsPerSend?: number; cpuMsPerSendByProcess?: Record<string, number> };
  floor?: { machineCpuMsPerSend: number | null };
  met: boolean | null;
}

/** Runs the bench REPEAT times, one after the other, and prints each run's key figures and their medians. */
export async function runRepeated(): Promise<void> {
  const runs = await runTimes<RunJson>(REPEAT, log);
  const floorRatio = spread(finite(runs.map((run) => run.floorRatio)));
  const medianFloorRatio = floorRatio.median;
  process.stdout.write(
    `${JSON.stringify({
      bench: 'send',
      repeat: REPEAT,
      runs: runs.map((run) => ({
        floorRatio: run.floorRatio,
        ratio: run.ratio,
        oursPerSecond: run.ours.perSecond,
        barePerSecond: run.bare.perSecond,
        oursMachineCpuMsPerSend: run.ours.machineCpuMsPerSend ?? null,
        floorMachineCpuMsPerSend: run.floor?.machineCpuMsPerSend ?? null,
        oursCpuMsPerSendByProcess: run.ours.cpuMsPerSendByProcess ?? null,
        failed: run.ours.failed,
      })),
      floorRatio,
      ratio: { median: median(runs.map((run) => run.ratio)) },
      runsMet: runs.filter((run) => run.met === true).length,
      goal: `the median over the runs of ours' machine CPU per send <= ${FLOOR_RATIO_GOAL} x the floor's (issue #38), every send answered`,
      met: medianFloorRatio === null ? null : medianFloorRatio <= FLOOR_RATIO_GOAL && runs.every((run) => run.ours.failed === 0),
    })}\n`,
  );
}
