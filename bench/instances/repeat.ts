/**
 * `--repeat K`: the whole run K times, each in a process of its own (a fresh simulator, bare process and worker
 * each time), and the median of their key figures. One run's connect ratio moved 1.39–2.00 within an hour on the
 * same code (docs/bench/instances.md, 2026-12-07): the goals are judged on the medians.
 */
import { finite, runTimes, spread } from '../support/repeat';
import { args } from './options';

/** What one run's JSON says, as far as the summary uses it. */
interface SideJson {
  connected: number;
  connectedWhenMeasured: number;
  perInstanceKb: number;
  connectSeconds: number;
  connectCpuMs: number;
}
interface RunJson {
  instances: number;
  /** Null for the side `--only` left out (then there is no ratio either). */
  bare: SideJson | null;
  ours: SideJson | null;
  ratio?: number;
  connect?: { ratio: number; cpuRatio: number };
}

export const REPEAT = Math.max(1, Math.floor(Number(args.get('repeat') ?? 1)) || 1);

/** Runs the bench REPEAT times, one after the other, and prints each run's key figures and their medians. */
export async function runRepeated(): Promise<void> {
  const runs = await runTimes<RunJson>(REPEAT, (line) => process.stderr.write(`[instances] ${line}\n`));
  const numbers = (pick: (run: RunJson) => number | null | undefined) => finite(runs.map(pick));
  const memory = spread(numbers((run) => run.ratio));
  const connect = spread(numbers((run) => run.connect?.ratio));
  const everyInstance = runs.every((run) =>
    [run.bare, run.ours].every((side) => side && side.connected === run.instances && side.connectedWhenMeasured === run.instances),
  );
  process.stdout.write(
    `${JSON.stringify({
      bench: 'instances',
      repeat: REPEAT,
      instances: runs[0]?.instances ?? null,
      runs: runs.map((run) => ({
        ratio: run.ratio ?? null,
        perInstanceKb: { bare: run.bare?.perInstanceKb ?? null, ours: run.ours?.perInstanceKb ?? null },
        connectRatio: run.connect?.ratio ?? null,
        connectCpuRatio: run.connect?.cpuRatio ?? null,
        connectSeconds: { bare: run.bare?.connectSeconds ?? null, ours: run.ours?.connectSeconds ?? null },
        connectCpuMs: { bare: run.bare?.connectCpuMs ?? null, ours: run.ours?.connectCpuMs ?? null },
      })),
      ratio: memory,
      connectRatio: connect,
      connectCpuRatio: spread(numbers((run) => run.connect?.cpuRatio)),
      goal: 'the medians over the runs: ours.perInstanceKb <= 1.2 x bare, connect time <= 1.1 x bare; every instance connected in every run',
      met: {
        memory: memory.median !== null && memory.median <= 1.2 && everyInstance,
        connect: connect.median !== null && connect.median <= 1.1 && everyInstance,
      },
    })}\n`,
  );
}
