/** The processes of the run: forking one in a role, and its messages and answers over IPC. */
import { fork, type ChildProcess } from 'node:child_process';
import { args, type Role } from './options';

export function send(message: unknown): void {
  process.send?.(message);
}

export function spawnRole(roleName: Role, extra: string[] = []): ChildProcess {
  return fork(process.argv[1], [roleName, ...[...args.entries()].flatMap(([key, value]) => [`--${key}`, value]), ...extra], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // WEBHOOKS_PROFILE=<dir> writes a CPU profile of the relay process there.
    // WEBHOOKS_RELAY_NODE_FLAGS='<flags>': Node/V8 flags of the relay process (diagnostics: e.g. how its JIT tiers up).
    execArgv:
      roleName === 'relay'
        ? [
            ...(process.env.WEBHOOKS_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.WEBHOOKS_PROFILE}`] : []),
            ...(process.env.WEBHOOKS_RELAY_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? []),
          ]
        : [],
  });
}

export function nextMessage<T>(child: ChildProcess, match: (message: Record<string, unknown>) => boolean): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (!match(message)) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message as T);
    };
    const onExit = (code: number | null) => reject(new Error(`child exited (${code}) before answering`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

let requestId = 0;
export async function ask<T>(child: ChildProcess, message: Record<string, unknown>): Promise<T> {
  const id = ++requestId;
  const answer = nextMessage<T>(child, (reply) => reply.id === id);
  child.send({ ...message, id });
  return answer;
}
