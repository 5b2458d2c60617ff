/**
 * `--db-rtt-ms N`: our processes reach Postgres through a proxy that holds each chunk going to it N ms
 * (libs/testing's latency proxy; the answers come back at once), as a Postgres on another machine N ms
 * of round trip further away. N is whole milliseconds: Node's timers count no less, and split over the
 * two ways 1 ms would have been 1 ms each way. The proxy runs in a child process of its own (the
 * bench's `db-proxy` role), so its CPU is in no process of ours. The bench reports the round trip it
 * measured through the proxy and directly (`dbRoundTripMs`).
 */
import { fork, type ChildProcess } from 'node:child_process';

export const DB_PROXY_ROLE = 'db-proxy';

/** Forks this bench as the proxy towards `databaseUrl`; answers the URL to reach Postgres through it. */
export async function startDbProxyChild(databaseUrl: string, rttMs: number): Promise<{ url: string; stop(): void }> {
  const child: ChildProcess = fork(process.argv[1], [DB_PROXY_ROLE, '--target', databaseUrl, '--rtt-ms', String(rttMs)], {
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
  const proxy = await startLatencyProxy({ host: hostname, port: Number(port || 5432) }, { upMs: Number(args.get('rtt-ms')), downMs: 0 });
  process.send?.({ url: proxy.rewrite(target) });
  process.once('disconnect', () => void proxy.close().then(() => process.exit(0)));
}

/** `--db-rtt-ms`: 0 (direct) unless given. */
export function dbRttMs(args: Map<string, string>): number {
  const rtt = Number(args.get('db-rtt-ms') ?? 0);
  if (!Number.isInteger(rtt) || rtt < 0) {
    process.stderr.write(`--db-rtt-ms is a whole number of milliseconds ≥ 0, not "${args.get('db-rtt-ms')}"\n`);
    process.exit(2);
  }
  return rtt;
}

/** The median round trip of `SELECT 1` at `url` (ms, two decimals): what a statement waits on the network and the server at least. */
export async function medianRoundTripMs(url: string): Promise<number> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    for (let i = 0; i < 20; i++) await client.query('SELECT 1');
    const times: number[] = [];
    for (let i = 0; i < 100; i++) {
      const started = performance.now();
      await client.query('SELECT 1');
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return Math.round(times[times.length >> 1] * 100) / 100;
  } finally {
    await client.end();
  }
}
