/** The simulator, in a child process of its own (`--sim process`, the default) or in the bench's (`--sim inline`). */
import { fork } from 'node:child_process';
import { answerQuestions, ask, loadMark, type LoadMark } from '../support/processes';
import { SIM_MODE, SIM_OPTIONS } from './options';

export interface Sim {
  websocketUrl: string;
  rootPublicKey: string;
  createAccount(phone: string): Promise<void>;
  /** The linked device's creds, BufferJSON-serialised. */
  provision(phone: string): Promise<string>;
  /** A contact's phone sends a text; the message id. */
  send(from: string, to: string, text: string): Promise<string>;
  /** The simulator's process's CPU and event loop so far (null inline: it is the bench's). */
  load(): Promise<LoadMark | null>;
  stop(): Promise<void>;
}

type StartSimulator = (typeof import('@gw/wa-sim'))['startSimulator'];

/** The simulator in a child process (driven by its control API), or in this one with `--sim inline`. */
export async function simulator(startSimulator: StartSimulator): Promise<Sim> {
  const { BufferJSON } = await import('@whiskeysockets/baileys');
  if (SIM_MODE === 'inline') {
    const running = await startSimulator(SIM_OPTIONS);
    return {
      websocketUrl: running.websocketUrl,
      rootPublicKey: running.rootPublicKey,
      createAccount: async (phone) => void running.sim.createAccount({ phone }),
      provision: async (phone) => JSON.stringify(running.sim.provisionDevice(phone).creds, BufferJSON.replacer),
      send: async (from, to, text) => (await running.sim.sendMessage(from, to, { text })).id,
      load: async () => null,
      stop: () => running.stop(),
    };
  }
  const child = fork(process.argv[1], ['sim-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const info = await new Promise<{ websocketUrl: string; controlUrl: string; rootPublicKey: string }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as never));
    child.once('exit', (code) => reject(new Error(`the simulator process exited (${code})`)));
  });
  const control = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await fetch(`${info.controlUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  return {
    websocketUrl: info.websocketUrl,
    rootPublicKey: info.rootPublicKey,
    createAccount: async (phone) => void (await control('/sim/accounts', { phone })),
    provision: async (phone) => JSON.stringify((await control<{ creds: unknown }>(`/sim/accounts/${phone}/provision`, {})).creds),
    send: async (from, to, text) => (await control<{ id: string }>(`/sim/accounts/${from}/send`, { to, text })).id,
    load: () => ask<LoadMark>(child, 'load'),
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}

/** The child process's side of `--sim process`: the simulator, until the bench disconnects. */
export async function simChild(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const running = await startSimulator(SIM_OPTIONS);
  answerQuestions({ load: () => loadMark() });
  process.send?.({ websocketUrl: running.websocketUrl, controlUrl: running.controlUrl, rootPublicKey: running.rootPublicKey });
  process.once('disconnect', () => void running.stop().finally(() => process.exit(0)));
}
