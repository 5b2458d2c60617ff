/** `--repeat K`: the whole run K times, each in a process of its own, and the median of their key figures. */
import { spawn } from 'node:child_process';
import { FLOOR_RATIO_GOAL, log, REPEAT, round } from './options';

/** What one run's JSON says, as far as the summary uses it. */
interface RunJson {
  ratio: number;
  floorRatio: number | null;
  bare: { perSecond: number };
  ours: { perSecond: number; failed: number; machineCpuMsPerSend?: number; cpuMsPerSendByProcess?: Record<string, number> };
  floor?: { machineCpuMsPerSend: number | null };
  met: boolean | null;
}

const median = (values: number[]): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : round((sorted[middle - 1] + sorted[middle]) / 2, 3);
};

/** This bench's command line without `--repeat K`: one ordinary run. */
function oneRunArgs(): string[] {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--repeat');
  if (at >= 0) argv.splice(at, 2);
  return [...process.execArgv, process.argv[1], ...argv];
}

function runOnce(index: number): Promise<RunJson> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, oneRunArgs(), { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        if (code !== 0) throw new Error(`exited with ${code}`);
        resolve(JSON.parse(line) as RunJson);
      } catch (error) {
        reject(new Error(`run ${index + 1} of ${REPEAT}: ${(error as Error).message}`));
      }
    });
  });
}

/** Runs the bench REPEAT times, one after the other, and prints each run's key figures and their medians. */
export async function runRepeated(): Promise<void> {
  const runs: RunJson[] = [];
  for (let index = 0; index < REPEAT; index++) {
    log(`run ${index + 1} of ${REPEAT}`);
    runs.push(await runOnce(index));
  }
  const floorRatios = runs.map((run) => run.floorRatio).filter((value): value is number => typeof value === 'number');
  const medianFloorRatio = median(floorRatios);
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
      floorRatio: {
        median: medianFloorRatio,
        min: floorRatios.length ? Math.min(...floorRatios) : null,
        max: floorRatios.length ? Math.max(...floorRatios) : null,
      },
      ratio: { median: median(runs.map((run) => run.ratio)) },
      runsMet: runs.filter((run) => run.met === true).length,
      goal: `the median over the runs of ours' machine CPU per send <= ${FLOOR_RATIO_GOAL} x the floor's (issue #38), every send answered`,
      met: medianFloorRatio === null ? null : medianFloorRatio <= FLOOR_RATIO_GOAL && runs.every((run) => run.ours.failed === 0),
    })}\n`,
  );
}
