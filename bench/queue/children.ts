/** The orchestrator's side of its children: forking one in a role, and waiting for its answers over IPC. */
import { fork, type ChildProcess } from 'node:child_process';
import { args, CPU_PROF, type Role } from './options';

export function firstMessage<T>(proc: ChildProcess, accept: (message: unknown) => boolean = () => true): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child exited with ${code} before answering`));
    const onMessage = (message: unknown) => {
      if (!accept(message)) return;
      proc.off('exit', onExit);
      proc.off('message', onMessage);
      resolve(message as T);
    };
    proc.once('exit', onExit);
    proc.on('message', onMessage);
  });
}

/** Asks a child to do something and waits for its `{done: what}`. */
export async function ask<T>(proc: ChildProcess, what: string, extra: Record<string, unknown> = {}): Promise<T> {
  const answer = firstMessage<T & { done: string; error?: string }>(proc, (message) => (message as { done?: string }).done === what);
  proc.send({ do: what, ...extra });
  const result = await answer;
  if (result.error) throw new Error(`${what}: ${result.error}`);
  return result;
}

export function child(roleName: Role, extra: string[]): ChildProcess {
  const passed = [...args.entries()].flatMap(([key, value]) => [`--${key}`, value]);
  const profile = CPU_PROF && roleName === 'ours' ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`, '--cpu-prof-name=ours.cpuprofile'] : [];
  return fork(process.argv[1], [roleName, ...passed, ...extra], { execArgv: ['--expose-gc', ...profile], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}
