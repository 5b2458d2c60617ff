/** The orchestrator's children: forked in a role with the run's flags, and their first answer. */
import { fork, type ChildProcess } from 'node:child_process';
import { CONCURRENCY, CPU_PROF, INSTANCES, N, PEERS, POOL, type Role, TOPOLOGY, WARMUP, WINDOW_ALLOCATIONS, WINDOW_PROF, WORKERS } from './options';

export function child(roleName: Role, extra: string[] = []): ChildProcess {
  const passed = [
    '--n',
    String(N),
    '--concurrency',
    String(CONCURRENCY),
    '--instances',
    String(INSTANCES),
    '--peers',
    String(PEERS),
    '--warmup',
    String(WARMUP),
    '--pool',
    String(POOL),
    '--topology',
    TOPOLOGY,
    '--workers',
    String(WORKERS),
    ...(WINDOW_PROF ? ['--window-prof', WINDOW_PROF] : []),
    ...(WINDOW_ALLOCATIONS ? ['--window-allocations', WINDOW_ALLOCATIONS] : []),
  ];
  const execArgv = [
    '--expose-gc',
    ...(CPU_PROF && roleName !== 'sim' ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`, `--cpu-prof-name=${roleName}.cpuprofile`] : []),
  ];
  return fork(process.argv[1], [roleName, ...passed, ...extra], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

export function firstMessage<T>(proc: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child exited with ${code} before answering`));
    proc.once('exit', onExit);
    proc.once('message', (message) => {
      proc.off('exit', onExit);
      resolve(message as T);
    });
  });
}
