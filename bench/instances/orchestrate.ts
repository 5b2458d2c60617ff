/** The orchestrator: the simulator, then each side in a process of its own, one after the other; the ratio and the goals; prints the JSON. */
import { fork, type ChildProcess } from 'node:child_process';
import { ask } from '../support/processes';
import type { ActivityDevices } from './activity';
import { HIBERNATED_GOAL, hibernatedMet, type HibernatedResult } from './hibernated';
import { ACTIVITY, args, HIBERNATED, N, type Role, type SimInfo } from './options';
import type { SideResult } from './sides';

function child(roleName: Role, extra: string[] = []): ChildProcess {
  const passed = [
    'snapshot',
    'bare-buffer-pool',
    'hibernated',
    'activity',
    'history',
    'contacts',
    'groups',
    'per-minute',
    'warm-up-minutes',
    'soak-minutes',
    'peers',
    'history-timeout',
    'cpu-profile',
    'first-reconcile-ms',
  ].flatMap((name) => (args.has(name) ? [`--${name}`, args.get(name) as string] : []));
  return fork(process.argv[1], [roleName, '--n', String(N), ...passed, ...extra], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

function firstMessage<T>(proc: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    proc.once('message', (message) => resolve(message as T));
    proc.once('exit', (code) => reject(new Error(`child exited with ${code} before answering`)));
  });
}

/** The environment that changes how native memory is kept (glibc tunables, a preloaded allocator). */
function allocatorEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => /^(MALLOC_|GLIBC_TUNABLES$|LD_PRELOAD$)/.test(name))) as Record<string, string>;
}

export async function orchestrate(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const simProcess = child('sim');
  const sim = await firstMessage<SimInfo>(simProcess);
  try {
    // One after the other: the two sides must not compete for the two cores while connecting.
    // (`--only bare|ours` runs one side, for looking into it; the ratio needs both.)
    const only = args.get('only');
    const runSide = async <T = SideResult>(side: 'bare' | 'ours' | 'hibernated', extra: string[]): Promise<T | null> => {
      if (only && only !== side) return null;
      // `--activity`: the simulator makes the side's accounts, peers, groups and histories, and the side gets their devices.
      const devices =
        ACTIVITY && side !== 'hibernated'
          ? await ask<ActivityDevices>(simProcess, 'activity-setup', { prefix: side === 'bare' ? '5531' : '5532' }, 1_800_000)
          : undefined;
      const proc = child(side, ['--sim', JSON.stringify(sim), ...extra]);
      const result = devices ? await ask<T>(proc, 'run', { devices: devices.devices, peers: devices.peers }, 24 * 3_600_000) : await firstMessage<T>(proc);
      proc.kill();
      // On stderr as soon as it is measured: a long run (--activity at N = 1,000 takes over an hour) that
      // fails on its second side keeps the first side's figures.
      process.stderr.write(`[instances] ${side}: ${JSON.stringify(result)}\n`);
      return result;
    };
    // With --activity, ours first: what fails at this size (a pool, a timeout) fails in its first minutes,
    // not after bare's whole course (the 2026-12-03 N = 1,000 attempt lost bare's 35 minutes that way).
    const oursFirst = ACTIVITY ? await runSide('ours', ['--db', databaseUrl]) : null;
    const bare = await runSide('bare', []);
    const ours = ACTIVITY ? oursFirst : await runSide('ours', ['--db', databaseUrl]);
    const hibernated = HIBERNATED > 0 ? await runSide<HibernatedResult>('hibernated', ['--db', databaseUrl]) : null;
    if (!bare || !ours) {
      // `--only hibernated`: its own goal (it needs no bare baseline).
      const hibernatedGoal = hibernated ? { hibernated, goal: HIBERNATED_GOAL, met: hibernatedMet(hibernated) } : {};
      process.stdout.write(`${JSON.stringify({ bench: 'instances', instances: N, node: process.version, bare, ours, ...hibernatedGoal })}\n`);
      return;
    }
    const soakMet = (side: SideResult) => !side.activity?.soak || side.activity.soak.growthPct <= 5;
    process.stdout.write(
      `${JSON.stringify({
        bench: 'instances',
        instances: N,
        node: process.version,
        ...(ACTIVITY ? { activity: ACTIVITY } : {}),
        // Both sides inherit the environment: an allocator setting applies to both or to neither.
        allocatorEnv: allocatorEnv(),
        bare,
        ours,
        ratio: Math.round((ours.perInstanceKb / Math.max(1, bare.perInstanceKb)) * 100) / 100,
        // Connecting (issue #38), a goal of its own: the time to have every instance connected, and the CPU it took each side.
        connect: {
          ratio: Math.round((ours.connectSeconds / bare.connectSeconds) * 100) / 100,
          cpuRatio: Math.round((ours.connectCpuMs / Math.max(0.1, bare.connectCpuMs)) * 100) / 100,
          // Ours' time from its first claim: the connecting without the first reconcile's wait (not the goal).
          ratioFromFirstClaim: Math.round(((ours.connectSeconds - (ours.firstClaimSeconds ?? 0)) / bare.connectSeconds) * 100) / 100,
          goal: 'ours.connectSeconds <= 1.1 * bare.connectSeconds',
          met: ours.connectSeconds <= 1.1 * bare.connectSeconds && ours.connected === N,
        },
        ...(hibernated ? { hibernated } : {}),
        goal: `ours.perInstanceKb <= 1.2 * bare.perInstanceKb, every instance connected when measured${hibernated ? ` && ${HIBERNATED_GOAL}` : ''}${ACTIVITY?.soakMinutes ? ' && each side.activity.soak.growthPct <= 5' : ''}`,
        met:
          ours.perInstanceKb <= 1.2 * bare.perInstanceKb &&
          ours.connected === N &&
          bare.connected === N &&
          ours.connectedWhenMeasured === N &&
          bare.connectedWhenMeasured === N &&
          (!hibernated || hibernatedMet(hibernated)) &&
          soakMet(ours) &&
          soakMet(bare),
      })}\n`,
    );
  } finally {
    simProcess.disconnect();
  }
}
