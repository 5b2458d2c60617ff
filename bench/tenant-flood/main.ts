/**
 * bench/tenant-flood: one tenant's flood against another tenant's latency. Tenant B sends a steady trickle
 * of `GET /instance/status` (a token lookup and a read) while alone, then again while tenant A floods
 * `POST /send/text` (`async: true`, a body of `--body-kb`) at `--flood-rate` per second, over A's request
 * limit (`--limit`, RATE_LIMIT_INSTANCE; default 20/s,burst=40: what A may send is accepted and costs what
 * it costs, the rest must cost the others next to nothing). The gateway HTTP app (in-process bus,
 * Postgres; no session worker: A's accepted sends wait in its queue) and B's client run in this process;
 * A's flood in a child process of its own (keep-alive, at most `--flood-sockets` connections), so its
 * client's CPU is not the gateway's event loop's.
 *
 *   npm run bench -- tenant-flood [--seconds 10] [--flood-rate 300] [--body-kb 4] [--b-rate 10] [--limit 20/s,burst=40] [--flood-sockets 64]
 *
 * Goal: B's p95 during A's flood ≤ 2 × B's p95 alone (issue #33: 21 → 138 ms when the limit was applied
 * by a guard, after each refused body had been read and parsed). Prints one JSON object on stdout
 * (progress on stderr).
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import pino from 'pino';

const isFlood = process.argv[2] === 'flood';
const args = new Map<string, string>();
for (let i = isFlood ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const SECONDS = Number(args.get('seconds') ?? 10);
const FLOOD_RATE = Number(args.get('flood-rate') ?? 300);
const BODY_KB = Number(args.get('body-kb') ?? 4);
const B_RATE = Number(args.get('b-rate') ?? 10);
const LIMIT = args.get('limit') ?? '20/s,burst=40';
const FLOOD_SOCKETS = Number(args.get('flood-sockets') ?? 64);
const GOAL_RATIO = 2;
const log = (line: string) => process.stderr.write(`[tenant-flood] ${line}\n`);
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Latencies {
  n: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  failed: number;
}

function summarise(latencies: number[], failed: number): Latencies {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
  return { n: sorted.length, p50Ms: at(0.5), p95Ms: at(0.95), p99Ms: at(0.99), maxMs: round(sorted[sorted.length - 1] ?? NaN), failed };
}

/** Calls `operation` at `rate` per second for `seconds`, without waiting for one to end before the next (an open loop). */
async function paced(rate: number, seconds: number, operation: () => Promise<void>): Promise<void> {
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const running: Array<Promise<void>> = [];
  let issued = 0;
  while (issued < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    while (issued < due) {
      running.push(operation());
      issued++;
    }
    await sleep(Math.max(1, Math.min(5, 1000 / rate)));
  }
  await Promise.all(running);
}

/** The child: A's flood against `--base-url`, its answers' statuses sent to the parent. */
async function flood(): Promise<void> {
  const baseUrl = new URL(String(args.get('base-url')));
  const agent = new Agent({ keepAlive: true, maxSockets: FLOOD_SOCKETS });
  const body = JSON.stringify({ number: '5531999999999', text: 'x'.repeat(BODY_KB * 1024), async: true });
  const statuses: Record<string, number> = {};
  const count = (key: string | number) => (statuses[key] = (statuses[key] ?? 0) + 1);
  const send = () =>
    new Promise<void>((resolve) => {
      const sent = request(
        {
          host: baseUrl.hostname,
          port: baseUrl.port,
          path: '/send/text',
          method: 'POST',
          agent,
          headers: { token: 'tok-flood-a', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (response) => {
          count(response.statusCode ?? 0);
          response.resume().on('end', resolve);
        },
      );
      sent.on('error', (error: NodeJS.ErrnoException) => {
        count(error.code ?? error.message);
        resolve();
      });
      sent.end(body);
    });
  for (let i = 0; i < 5; i++) await send(); // warm-up: A's bucket exists
  delete statuses[200];
  process.send?.({ ready: true });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  const started = performance.now();
  await paced(FLOOD_RATE, SECONDS, send);
  process.send?.({ statuses, tookSeconds: (performance.now() - started) / 1000 });
  agent.destroy();
}

async function main(): Promise<void> {
  const { openDatabase } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { EnvReader } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/runtime/http-app');
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 10 });
  const bus = new InProcessBus();
  try {
    await dataSource.query(
      `INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ('rflooda', 'tok-flood-a', 'tenant-a', 'disconnected', true, '5531000000001'), ('rfloodb', 'tok-flood-b', 'tenant-b', 'disconnected', true, '5531000000002')`,
    );
    const config = loadGatewayConfig(new EnvReader({ DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent', RATE_LIMIT_INSTANCE: LIMIT }), []);
    const app = await createHttpApp({ config, dataSource, bus, logger: pino({ level: 'silent' }) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const limit = config.rateLimits.instance;

    const bLatencies: number[] = [];
    let bFailed = 0;
    const bErrors: Record<string, number> = {};
    const tenantB = async () => {
      const t0 = performance.now();
      try {
        const response = await fetch(`${baseUrl}/instance/status`, { headers: { token: 'tok-flood-b' } });
        await response.arrayBuffer();
        if (response.status === 200) return void bLatencies.push(performance.now() - t0);
        bErrors[response.status] = (bErrors[response.status] ?? 0) + 1;
      } catch (error) {
        const key = String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
        bErrors[key] = (bErrors[key] ?? 0) + 1;
      }
      bFailed++;
    };
    // Warm-up: B's token looked up once (its bucket exists), the route and the JIT warm; then A's child.
    for (let i = 0; i < 20; i++) await tenantB();
    bLatencies.length = 0;
    bFailed = 0;
    const child = fork(
      process.argv[1],
      [
        'flood',
        '--base-url',
        baseUrl,
        '--seconds',
        String(SECONDS),
        '--flood-rate',
        String(FLOOD_RATE),
        '--body-kb',
        String(BODY_KB),
        '--flood-sockets',
        String(FLOOD_SOCKETS),
      ],
      {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    const messages: Array<Record<string, unknown>> = [];
    let delivered: (() => void) | undefined;
    child.on('message', (message: Record<string, unknown>) => {
      messages.push(message);
      delivered?.();
    });
    const nextMessage = async () => {
      while (!messages.length) await new Promise<void>((resolve) => (delivered = resolve));
      return messages.shift()!;
    };
    await nextMessage(); // ready
    await sleep(Math.ceil((limit ? limit.burst / limit.perSecond : 0) * 1000) + 500); // A's bucket full again

    log(`B alone: ${B_RATE}/s for ${SECONDS} s`);
    await paced(B_RATE, SECONDS, tenantB);
    const alone = summarise(bLatencies, bFailed);
    log(`B alone: p50 ${alone.p50Ms} ms, p95 ${alone.p95Ms} ms`);

    bLatencies.length = 0;
    bFailed = 0;
    log(`B during A's flood: A ${FLOOD_RATE}/s with ${BODY_KB} KB bodies`);
    child.send('go');
    const [floodResult] = await Promise.all([
      nextMessage() as Promise<{ statuses: Record<string, number>; tookSeconds: number }>,
      paced(B_RATE, SECONDS, tenantB),
    ]);
    const during = summarise(bLatencies, bFailed);
    log(`B during the flood: p50 ${during.p50Ms} ms, p95 ${during.p95Ms} ms; A's answers ${JSON.stringify(floodResult.statuses)}`);

    await app.close();
    const ratio = round(during.p95Ms / alone.p95Ms, 2);
    process.stdout.write(
      `${JSON.stringify({
        seconds: SECONDS,
        rateLimitInstance: limit ?? 'off',
        flood: {
          ratePerSecond: FLOOD_RATE,
          bodyKb: BODY_KB,
          sockets: FLOOD_SOCKETS,
          requests: Math.round(FLOOD_RATE * SECONDS),
          tookSeconds: round(floodResult.tookSeconds, 2),
          statuses: floodResult.statuses,
        },
        b: { ratePerSecond: B_RATE, alone, duringFlood: during, errors: bErrors },
        p95Ratio: ratio,
        goal: { p95RatioMax: GOAL_RATIO },
        met: during.failed === 0 && ratio <= GOAL_RATIO,
      })}\n`,
    );
  } finally {
    await bus.close();
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

(isFlood ? flood : main)().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
    process.exit(1);
  },
);
