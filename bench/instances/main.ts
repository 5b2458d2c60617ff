/**
 * bench/instances: memory per connected instance. N instances connected to the simulator through one
 * session worker (our stack: Postgres auth state, leases, the worker's bookkeeping), next to N bare
 * Baileys sockets with in-memory auth connected to the same simulator in a plain process. Each side
 * runs in a process of its own so that its RSS is its own; the simulator runs in a third.
 *
 *   npm run bench -- instances [--n 200] [--only bare|ours|hibernated] [--hibernated <h>] [--snapshot <path>] [--bare-buffer-pool <bytes>] [--first-reconcile-ms <ms>] [--repeat K]
 *   npm run bench -- instances --activity [--history 1000] [--contacts 200] [--groups 50] [--per-minute 1] [--warm-up-minutes 2] [--soak-minutes 30]
 *
 * Connecting: each side's time to have all N connected (`connectSeconds`) and its CPU per instance meanwhile
 * (`connectCpuMs`), compared in `connect` (goal: ours ≤ 1.1 × bare's time); ours' `firstClaimSeconds` is when its
 * worker held its first lease (its first reconcile waits one interval by design), and `connect.ratioFromFirstClaim`
 * the time ratio from then on (`--first-reconcile-ms 0`: the worker of a one-worker deployment, as the embedded default,
 * which looks at once); `--cpu-profile <path>` writes a CPU profile of each side's connect window.
 *
 * `--repeat K` runs the whole bench K times, each in a process of its own, and prints each run's key figures and
 * their medians (./repeat.ts); the goals are then judged on the medians.
 *
 * Prints one JSON object. Goal: ours ≤ 1.2 × bare per instance. Each side's growth is split into
 * JS heap, ArrayBuffers and native memory (`perInstance`, see docs/adr/0016 for what is in each).
 *
 * `--hibernated <h>` (uazapi 2.1.1's hibernation): a third process, a session worker warmed by
 * connecting and hibernating 3 instances (so code compiled and modules loaded on the first connect
 * are not counted), measured without more (`withoutMb`), then with h more paired instances connected,
 * then once they are hibernated through the worker's `hibernate` op (what POST /instance/hibernate
 * asks). Goal then also: a hibernated instance keeps ≤ 5% of the JS heap a connected one holds.
 *
 * `--activity` (issue #38): the instances at work, each with a history, contacts, groups and a steady
 * message a minute both ways, bare doing the same (./activity.ts). Goal: the same ratio, measured after
 * the warm-up; with `--soak-minutes`, also each side's RSS growth over the soak ≤ 5 %.
 */
import { answerQuestions } from '../support/processes';
import type { ActivityDevices } from './activity';
import { runHibernated } from './hibernated';
import { ACTIVITY, args, role, send, type SimInfo } from './options';
import { orchestrate } from './orchestrate';
import { REPEAT, runRepeated } from './repeat';
import { runBare, runOurs, runSim } from './sides';

async function main(): Promise<void> {
  if (role === 'sim') return runSim();
  if (ACTIVITY && (role === 'bare' || role === 'ours')) {
    // Traffic makes libsignal rotate sessions, which it prints in full: off the bench's stdout (its JSON).
    (await import('@gw/wa-sim')).quietLibsignalConsole();
    const sim = JSON.parse(args.get('sim') as string) as SimInfo;
    answerQuestions({
      run: (data) =>
        role === 'bare' ? runBare(sim, data as unknown as ActivityDevices) : runOurs(sim, args.get('db') as string, data as unknown as ActivityDevices),
    });
    return;
  }
  if (role === 'bare') {
    send(await runBare(JSON.parse(args.get('sim') as string) as SimInfo));
    return;
  }
  if (role === 'hibernated') {
    send(await runHibernated(JSON.parse(args.get('sim') as string) as SimInfo, args.get('db') as string));
    return;
  }
  if (role === 'ours') {
    send(await runOurs(JSON.parse(args.get('sim') as string) as SimInfo, args.get('db') as string));
    return;
  }
  if (REPEAT > 1) await runRepeated();
  else await orchestrate();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
