import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * The machine's nats-server binary (the one .ci/run starts). tools/jest/test.js names the same path: the
 * suites that start their own NATS with it run beside other suites only where it exists.
 */
export const NATS_SERVER_BINARY = '/usr/sbin/nats-server';

/** A nats-server of one suite's own (`stop()` it in afterAll). */
export interface PrivateNats {
  url: string;
  stop(): Promise<void>;
}

/**
 * A nats-server of this suite's own, on a free loopback port (no JetStream: the bus does not use it), for
 * suites whose subjects are one for every stack on a NATS (`session.place`, the instance subjects): on
 * their own server a second suite's session worker cannot take their placements or answer their ops, so
 * they can run beside other suites. Null where the binary is missing (then the suite takes
 * testNatsUrl()'s, and tools/jest/test.js runs it alone).
 */
export async function startPrivateNats(): Promise<PrivateNats | null> {
  if (!existsSync(NATS_SERVER_BINARY)) return null;
  // `-p -1`: the server picks a free port itself and logs it (no window for another process to take it).
  const server = spawn(NATS_SERVER_BINARY, ['-a', '127.0.0.1', '-p', '-1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  // Not left behind by a test process that ends without its afterAll (a crash, Jest's forceExit).
  const orphaned = () => server.kill('SIGKILL');
  process.once('exit', orphaned);
  void exited.then(() => process.off('exit', orphaned));
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    await exited;
  };
  let log = '';
  const port = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), 10_000);
    server.stderr!.on('data', (chunk: Buffer) => {
      if (log.length > 20_000) return; // started (or failed) long ago: the rest is read and dropped
      log += chunk.toString();
      const listening = /Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(log);
      if (listening && log.includes('Server is ready')) {
        clearTimeout(timer);
        resolve(Number(listening[1]));
      }
    });
    void exited.then(() => (clearTimeout(timer), resolve(null)));
  });
  if (port === null) {
    await stop();
    throw new Error(`${NATS_SERVER_BINARY} did not start: ${log.slice(-400)}`);
  }
  return { url: `nats://127.0.0.1:${port}`, stop };
}
