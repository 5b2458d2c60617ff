/**
 * `--db-rtt-ms N`: our processes reach Postgres through a proxy that holds each chunk N / 2 ms each
 * way (libs/testing's latency proxy), as a Postgres on another machine N ms of round trip away. The
 * proxy runs in a child process of its own (the bench's `db-proxy` role), so its CPU is in no
 * process of ours.
 */
import { fork, type ChildProcess } from 'node:child_process';

export const DB_PROXY_ROLE = 'db-proxy';

/** Forks this bench as the proxy towards `databaseUrl`; answers the URL to reach Postgres through it. */
export async function startDbProxyChild(databaseUrl: string, rttMs: number): Promise<{ url: string; stop(): void }> {
  const child: ChildProcess = fork(process.argv[1], [DB_PROXY_ROLE, '--target', databaseUrl, '--one-way-ms', String(rttMs / 2)], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the database proxy exited (${code}) before it listened`)));
  });
  return { url, stop: () => void child.kill() };
}

/** The proxy's process: listens, tells its parent the URL, lives until the parent disconnects. */
export async function serveDbProxyChild(args: Map<string, string>): Promise<void> {
  const { startLatencyProxy } = await import('../../libs/testing/src/latency-proxy');
  const target = args.get('target') as string;
  const { hostname, port } = new URL(target);
  const proxy = await startLatencyProxy({ host: hostname, port: Number(port || 5432) }, Number(args.get('one-way-ms')));
  process.send?.({ url: proxy.rewrite(target) });
  process.once('disconnect', () => void proxy.close().then(() => process.exit(0)));
}

/** `--db-rtt-ms`: 0 (direct) unless given. */
export function dbRttMs(args: Map<string, string>): number {
  const rtt = Number(args.get('db-rtt-ms') ?? 0);
  if (!Number.isFinite(rtt) || rtt < 0) {
    process.stderr.write(`--db-rtt-ms is a number of milliseconds ≥ 0, not "${args.get('db-rtt-ms')}"\n`);
    process.exit(2);
  }
  return rtt;
}
