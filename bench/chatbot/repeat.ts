/**
 * `--repeat K`: the whole bench K times, each in a process of its own (its own simulator, model, worker and
 * schema), and the goal judged on medians. One run's added p99 at a rate moved from 125 to 712 ms between runs
 * of the same code on one machine (docs/bench/chatbot.md, 2026-12-06): more than the goal's 20 ms margin.
 *
 * Each run climbs the rates on its own, so the rate judged is the highest both sides sustained in every run
 * (`goalRate`: the lowest of the runs' own goal rates); every run measured both sides there. The goal: the
 * median over the runs of ours' added p99 at that rate ≤ the median of the bare bot's + GOAL_MARGIN_MS.
 */
import { args, GOAL_MARGIN_MS, log } from './options';
import { finite, runTimes, spread } from '../support/repeat';

/** A rate as one run's `byRate` lists it. */
interface RateSummary {
  rate: number;
  sustained: boolean;
  roundsPerSecond: number;
  addedP99Ms: number | null;
}

/** What one run's JSON says, as far as the summary uses it. */
interface RunJson {
  goalRate: number | null;
  met: boolean;
  ours?: { cpuMsPerRound?: { ours?: number; postgres?: number; simulator?: number }; statementsPerRound?: number };
  byRate?: { ours: RateSummary[]; bareBot?: RateSummary[] };
}

export const REPEAT = Math.max(0, Math.floor(Number(args.get('repeat') ?? 0)) || 0);

/** Runs the bench REPEAT times, one after the other, and prints each run's key figures and the medians. */
export async function runRepeated(): Promise<void> {
  const runs = await runTimes<RunJson>(REPEAT, log);
  const at = (list: RateSummary[] | undefined, rate: number | null) => (rate === null ? undefined : list?.find((measured) => measured.rate === rate));
  const rates = runs.map((run) => run.goalRate);
  const withBareBot = runs.every((run) => run.byRate?.bareBot !== undefined);
  // Every run sustained its own goal rate on both sides, and every lower rate it climbed through.
  const goalRate = rates.every((rate): rate is number => typeof rate === 'number') ? Math.min(...rates) : null;
  const oursP99 = spread(finite(runs.map((run) => at(run.byRate?.ours, goalRate)?.addedP99Ms)));
  const bareP99 = spread(finite(runs.map((run) => at(run.byRate?.bareBot, goalRate)?.addedP99Ms)));
  // Every rate any run measured: the medians of the runs that measured it.
  const allRates = [...new Set(runs.flatMap((run) => (run.byRate?.ours ?? []).map((measured) => measured.rate)))].sort((a, b) => a - b);
  const byRate = allRates.map((rate) => ({
    rate,
    runs: runs.filter((run) => at(run.byRate?.ours, rate)).length,
    oursAddedP99Ms: spread(finite(runs.map((run) => at(run.byRate?.ours, rate)?.addedP99Ms))),
    bareBotAddedP99Ms: spread(finite(runs.map((run) => at(run.byRate?.bareBot, rate)?.addedP99Ms))),
  }));
  process.stdout.write(
    `${JSON.stringify({
      bench: 'chatbot',
      repeat: REPEAT,
      runs: runs.map((run) => ({
        goalRate: run.goalRate,
        oursAddedP99Ms: at(run.byRate?.ours, run.goalRate)?.addedP99Ms ?? null,
        bareBotAddedP99Ms: at(run.byRate?.bareBot, run.goalRate)?.addedP99Ms ?? null,
        met: run.met,
        cpuMsPerRound: run.ours?.cpuMsPerRound ?? null,
        statementsPerRound: run.ours?.statementsPerRound ?? null,
      })),
      byRate,
      goalRate,
      oursAddedP99Ms: oursP99,
      bareBotAddedP99Ms: bareP99,
      goal: `at the highest rate both sides sustained in every run (goalRate), the median of ours' added p99 <= the median of the bare bot's + ${GOAL_MARGIN_MS} ms (issue #38)`,
      met: withBareBot && goalRate !== null && oursP99.median !== null && bareP99.median !== null ? oursP99.median <= bareP99.median + GOAL_MARGIN_MS : false,
    })}\n`,
  );
}
