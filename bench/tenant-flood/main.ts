/**
 * bench/tenant-flood: one tenant's flood against another tenant's latency. Tenant B sends a steady trickle
 * of `GET /instance/status` (a token lookup and a read) while alone, and while tenant A floods
 * `POST /send/text` (`async: true`, a body of `--body-kb`) at `--flood-rate` per second, over A's request
 * limit (`--limit`, RATE_LIMIT_INSTANCE; default 20/s,burst=40: what A may send is accepted and costs what
 * it costs, the rest must cost the others next to nothing). The gateway HTTP app (in-process bus,
 * Postgres; no session worker: A's accepted sends wait in its queue) and B's client run in this process;
 * A's flood in a child process of its own (keep-alive, at most `--flood-sockets` connections), so its
 * client's CPU is not the gateway's event loop's.
 *
 * The two phases alternate in `--rounds` windows of `--seconds`/`--rounds` each (B alone, A's flood, B
 * alone, …; a pause after each flood window so its tail is not counted as "alone"): on a machine others
 * share, the load they add changes from one minute to the next, and measuring the phases one after the
 * other compared two different machines. `--rounds 1` is the old design (10 s alone, then 10 s of flood).
 * A's bucket refills while B is alone, so over the whole run A is accepted at its limit's rate.
 *
 *   npm run bench -- tenant-flood [--seconds 10] [--rounds 5] [--flood-rate 300] [--body-kb 4] [--b-rate 10] [--limit 20/s,burst=40] [--flood-sockets 64]
 *
 * Goal: B's p95 during A's flood ≤ 2 × B's p95 alone (issue #33: 21 → 138 ms when the limit was applied
 * by a guard, after each refused body had been read and parsed). Prints one JSON object on stdout
 * (progress on stderr), with the machine's load average and, per phase, the gateway process's CPU and
 * event-loop delay; `flood.gatewayCpuMsPerRequest` is what each of A's requests cost the gateway.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { createHistogram } from 'node:perf_hooks';
import pino from 'pino';

const isFlood = process.argv[2] === 'flood';
const args = new Map<string, string>();
for (let i = isFlood ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const SECONDS = Number(args.get('seconds') ?? 10);
const ROUNDS = Math.max(1, Number(args.get('rounds') ?? 5));
const FLOOD_RATE = Number(args.get('flood-rate') ?? 300);
const BODY_KB = Number(args.get('body-kb') ?? 4);
const B_RATE = Number(args.get('b-rate') ?? 10);
const LIMIT = args.get('limit') ?? '20/s,burst=40';
const FLOOD_SOCKETS = Number(args.get('flood-sockets') ?? 64);
const GOAL_RATIO = 2;
/** After each flood window, before B's next window alone: the flood's last answers and its garbage. */
const SETTLE_MS = 500;
const log = (line: string) => process.stderr.write(`[tenant-flood] ${line}\n`);
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cpuMicros = (usage: NodeJS.CpuUsage) => usage.user + usage.system;

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

/** One phase (B alone, or B during A's flood) over its windows: B's latencies, and what the gateway's process spent. */
class Phase {
  readonly latencies: number[] = [];
  /** B's time inside the gateway (Fastify's onRequest to onResponse), to tell it from the time before it. */
  readonly inGateway: number[] = [];
  failed = 0;
  /** CPU of the gateway's process (B's client included) over the phase's windows, in µs. */
  cpu = 0;
  seconds = 0;
  private readonly loopDelay = createHistogram();
  /** The database pool every 10 ms: connections in use, and queries waiting for one. */
  private readonly pool = { samples: 0, busyMax: 0, waitingMax: 0, waitingSum: 0 };

  constructor(private readonly poolNow: () => { total: number; idle: number; waiting: number }) {}

  /** Measures one window of this phase around `run`. */
  async window(run: () => Promise<unknown>): Promise<void> {
    const cpu = process.cpuUsage();
    const started = performance.now();
    // The sampler's own lateness is the event loop's delay (µs; a histogram takes integers from 1).
    let due = performance.now() + 10;
    const sampler = setInterval(() => {
      const now = performance.now();
      this.loopDelay.record(Math.max(1, Math.round((now - due) * 1000)));
      due = now + 10;
      const { total, idle, waiting } = this.poolNow();
      this.pool.samples++;
      this.pool.busyMax = Math.max(this.pool.busyMax, total - idle);
      this.pool.waitingMax = Math.max(this.pool.waitingMax, waiting);
      this.pool.waitingSum += waiting;
    }, 10);
    await run();
    clearInterval(sampler);
    this.seconds += (performance.now() - started) / 1000;
    this.cpu += cpuMicros(process.cpuUsage(cpu));
  }

  summary() {
    const ms = (micros: number) => round(micros / 1000);
    return {
      ...summarise(this.latencies, this.failed),
      inGateway: summarise(this.inGateway, 0),
      gateway: {
        cpuMs: round(this.cpu / 1000, 0),
        cpuShare: round(this.cpu / 1e6 / this.seconds, 2),
        loopDelayP50Ms: ms(this.loopDelay.percentile(50)),
        loopDelayP99Ms: ms(this.loopDelay.percentile(99)),
        loopDelayMaxMs: ms(this.loopDelay.max),
      },
      pool: { busyMax: this.pool.busyMax, waitingMax: this.pool.waitingMax, waitingMean: round(this.pool.waitingSum / Math.max(1, this.pool.samples), 2) },
    };
  }
}

/** The child: A's flood against `--base-url`, one window per message from the parent; its answers' statuses sent back at the end. */
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
  let tookSeconds = 0;
  let cpu = 0;
  // A window of flood per number the parent sends (its length in seconds), until it sends anything else.
  for (;;) {
    const window = await new Promise<unknown>((resolve) => process.once('message', resolve));
    if (typeof window !== 'number') break;
    const started = performance.now();
    const before = process.cpuUsage();
    await paced(FLOOD_RATE, window, send);
    cpu += cpuMicros(process.cpuUsage(before));
    tookSeconds += (performance.now() - started) / 1000;
    process.send?.({ window: true });
  }
  process.send?.({ statuses, tookSeconds, cpuMs: cpu / 1000 });
  agent.destroy();
}

async function main(): Promise<void> {
  const { openDatabase, MetricsRepository } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { EnvReader } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/http-app');
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
    const metrics = new MetricsRepository(dataSource);
    const poolNow = () => metrics.databasePool();
    const alone = new Phase(poolNow);
    const during = new Phase(poolNow);
    let phase = alone;
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onResponse', (request, reply, done) => {
        if (request.headers.token === 'tok-flood-b') phase.inGateway.push(reply.elapsedTime);
        done();
      });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    const limit = config.rateLimits.instance;

    const bErrors: Record<string, number> = {};
    const tenantB = async () => {
      const counted = phase;
      const t0 = performance.now();
      try {
        const response = await fetch(`${baseUrl}/instance/status`, { headers: { token: 'tok-flood-b' } });
        await response.arrayBuffer();
        if (response.status === 200) return void counted.latencies.push(performance.now() - t0);
        bErrors[response.status] = (bErrors[response.status] ?? 0) + 1;
      } catch (error) {
        const key = String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message);
        bErrors[key] = (bErrors[key] ?? 0) + 1;
      }
      counted.failed++;
    };
    // Warm-up: B's token looked up once (its bucket exists), the route and the JIT warm; then A's child.
    const warmUp = new Phase(poolNow);
    phase = warmUp;
    for (let i = 0; i < 20; i++) await tenantB();
    const child = fork(
      process.argv[1],
      ['flood', '--base-url', baseUrl, '--flood-rate', String(FLOOD_RATE), '--body-kb', String(BODY_KB), '--flood-sockets', String(FLOOD_SOCKETS)],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
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

    const window = SECONDS / ROUNDS;
    const loadAtStart = loadavg()[0];
    log(
      `${ROUNDS} × (B alone ${window} s, then A's flood ${window} s): B ${B_RATE}/s, A ${FLOOD_RATE}/s with ${BODY_KB} KB bodies (load ${loadAtStart.toFixed(1)})`,
    );
    for (let i = 0; i < ROUNDS; i++) {
      phase = alone;
      await alone.window(() => paced(B_RATE, window, tenantB));
      phase = during;
      child.send(window);
      await during.window(() => Promise.all([nextMessage(), paced(B_RATE, window, tenantB)]));
      phase = warmUp;
      await sleep(SETTLE_MS);
    }
    child.send('end');
    const floodResult = (await nextMessage()) as { statuses: Record<string, number>; tookSeconds: number; cpuMs: number };
    const [aloneSummary, duringSummary] = [alone.summary(), during.summary()];
    log(`B alone: p50 ${aloneSummary.p50Ms} ms, p95 ${aloneSummary.p95Ms} ms`);
    log(`B during the flood: p50 ${duringSummary.p50Ms} ms, p95 ${duringSummary.p95Ms} ms; A's answers ${JSON.stringify(floodResult.statuses)}`);

    await app.close();
    const requests = Math.round(FLOOD_RATE * window) * ROUNDS;
    const ratio = round(duringSummary.p95Ms / aloneSummary.p95Ms, 2);
    process.stdout.write(
      `${JSON.stringify({
        seconds: SECONDS,
        rounds: ROUNDS,
        rateLimitInstance: limit ?? 'off',
        flood: {
          ratePerSecond: FLOOD_RATE,
          bodyKb: BODY_KB,
          sockets: FLOOD_SOCKETS,
          requests,
          tookSeconds: round(floodResult.tookSeconds, 2),
          statuses: floodResult.statuses,
          clientCpuMs: round(floodResult.cpuMs, 0),
          // The gateway's CPU per second of flood, less its CPU per second alone, per request of A's.
          gatewayCpuMsPerRequest: round(((during.cpu / during.seconds - alone.cpu / alone.seconds) * during.seconds) / 1000 / requests, 3),
        },
        b: { ratePerSecond: B_RATE, alone: aloneSummary, duringFlood: duringSummary, errors: bErrors },
        loadAverage: { start: round(loadAtStart, 1), end: round(loadavg()[0], 1) },
        p95Ratio: ratio,
        goal: { p95RatioMax: GOAL_RATIO },
        met: duringSummary.failed === 0 && ratio <= GOAL_RATIO,
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
