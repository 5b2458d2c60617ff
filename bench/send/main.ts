/**
 * bench/send: synchronous text sends through the whole stack. `POST /send/text` over HTTP (keep-alive)
 * → gateway → bus → session worker → Baileys → the simulator's server ack, for M connected instances,
 * next to a bare script calling Baileys `sendMessage` on M sockets (in-memory auth) against the same
 * simulator, each awaited until the server's `<ack class="message">` too. Same N, same concurrency,
 * same (instance, peer) pairs; the sides run one after the other so they don't compete for the cores.
 *
 *   npm run bench -- send [--n 2000] [--concurrency 50] [--instances 50] [--peers 10] [--warmup 1] [--pool 20]
 *                         [--topology split|single] [--workers 1] [--db-rtt-ms 0] [--floor 1] [--otlp 0]
 *
 * Processes: the simulator (load mode), the bare side, the ours side and the orchestrator, which drives
 * the HTTP load for ours (a client of its own, as in production). `--topology split` (default) is the
 * deployed one: the gateway HTTP app in one process and the session worker in a child process of its
 * own (as apps/gateway and apps/session-worker), over real NATS (NATS_URL, default nats://127.0.0.1:4222;
 * every subject under a prefix of the run's own, the server may be shared) and one Postgres schema, each
 * process with a pool of `--pool` connections. `--topology single` hosts both in one process over the
 * in-process bus, sharing one pool (the embedded `npm start`; what every run recorded before this flag measured).
 * Before measuring, each side sends `--warmup` rounds of one message per instance (device lookup and
 * Signal session set-up with its peer), not counted.
 *
 * `--db-rtt-ms N` puts ours' Postgres N more ms of round trip away (another machine's, as deployed): a
 * proxy in a process of its own holds each chunk towards it N ms (whole ms); the result carries `dbRttMs`
 * and the median `SELECT 1` round trip measured directly and through the proxy (`dbRoundTripMs`).
 *
 * `--otlp 1` runs ours with tracing on (issue #40): OTEL_EXPORTER_OTLP_ENDPOINT set for its processes, the
 * spans exported (OTLP/HTTP JSON) to a loopback collector in the orchestrator that counts them (`otlp`:
 * exports, spans, bytes, spans per send). The collector's CPU is the orchestrator's (the HTTP client's),
 * not ours'; compare `cpuMsPerSend` (ours' processes) of runs with and without.
 *
 * After both sides, `floor` (runFloor(); `--floor 0` skips it): the deployed hops with no code of ours,
 * at ours' rate, and with bare Baileys' machine CPU added: what the machine spends per send before any
 * code of ours runs (docs/adr/0025).
 *
 * Prints one JSON object on stdout (progress on stderr), with `topology`. Goal: ours ≥ 0.8 × bare
 * throughput. Next to throughput, each side reports its CPU time per send (`cpuMsPerSend`, `cpuRatio`;
 * ours per process in `cpuMsPerSendByProcess` and their sum in `cpuMsPerSend`), steadier than throughput
 * on a shared machine, and ours the SQL statements per send, summed over its processes (`sqlPerSend`;
 * per process in `sqlPerSendByProcess`), with the most frequent ones.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { Bus } from '@gw/bus';
import type { DataSource } from 'typeorm';
import {
  ask,
  countStatements,
  loadBetween,
  loadMark,
  type LoadMark,
  PrefixedBus,
  serveWorkerChild,
  startSessionWorker,
  stopChild,
  UNCOUNTED,
  windowProfiler,
  type WorkerSetup,
} from '../support/processes';
import { DB_PROXY_ROLE, dbRttMs, medianRoundTripMs, serveDbProxyChild, startDbProxyChild } from '../support/db-latency';
import { analyzeSchema } from '../support/postgres';
import { openBareSockets, provisionDevices, serverAcks, simControl } from '../support/sim-clients';

type Role = 'orchestrate' | 'sim' | 'bare' | 'ours' | 'worker' | 'hop-http' | 'hop-nats' | typeof DB_PROXY_ROLE;

interface SimInfo {
  websocketUrl: string;
  controlUrl: string;
  rootPublicKey: string;
}

interface LoadResult {
  sent: number;
  failed: number;
  firstError?: string;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /**
   * CPU time of the whole machine (every process: this stack, the simulator, Postgres, the HTTP
   * client; /proc/stat) per send during the measured sends, and how busy the cores were. On a 2-core
   * machine where everything shares the cores, throughput is bounded by cores ÷ this.
   */
  machineCpuMsPerSend?: number;
  machineBusyPercent?: number;
  /**
   * machineCpuMsPerSend split by process (/proc/<pid>/stat): this bench's roles by name (sim, bare,
   * ours, worker…, orchestrate: the HTTP client), every other program by its command name (postgres,
   * nats-server…); what is left is the kernel's own work and processes that ended during the sends.
   */
  machineCpuMsPerSendBy?: Record<string, number>;
}

interface SideResult extends LoadResult {
  connected: number;
  connectSeconds: number;
  /**
   * CPU time of the side's process (user + system) per send, warm-up included: what a send costs,
   * which a noisy machine disturbs far less than throughput. Ours is the gateway's process and the
   * worker's summed (split), or the one process hosting both (single); its HTTP client is the
   * orchestrator, not counted, nor is the simulator on either side.
   */
  cpuMsPerSend?: number;
}

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const N = Number(args.get('n') ?? 2000);
const CONCURRENCY = Number(args.get('concurrency') ?? 50);
const INSTANCES = Number(args.get('instances') ?? 50);
const PEERS = Number(args.get('peers') ?? 10);
const WARMUP = Number(args.get('warmup') ?? 1);
/** Postgres connections of each of ours' processes (single: the gateway and the worker share one pool). */
const POOL = Number(args.get('pool') ?? 20);
const TOPOLOGY = args.get('topology') ?? 'split';
/** `--db-rtt-ms N`: ours reaches Postgres N ms of round trip away (a proxy; bench/support/db-latency.ts). */
const DB_RTT_MS = dbRttMs(args);
if (TOPOLOGY !== 'split' && TOPOLOGY !== 'single') {
  process.stderr.write(`--topology is split or single, not "${TOPOLOGY}"\n`);
  process.exit(2);
}
/**
 * `--workers N` (split only): N session-worker processes side by side, as N replicas of apps/session-worker
 * on one machine; each takes at most ⌈instances ÷ N⌉ leases, so the instances spread over them.
 */
const WORKERS = Number(args.get('workers') ?? 1);
if (!Number.isInteger(WORKERS) || WORKERS < 1 || (WORKERS > 1 && TOPOLOGY !== 'split')) {
  process.stderr.write(`--workers is a whole number ≥ 1, above 1 only with --topology split\n`);
  process.exit(2);
}
/** The worker child's index among --workers (its lease holder id and profile name). */
const WORKER_INDEX = Number(args.get('worker-index') ?? 0);
const workerName = (index: number) => (WORKERS === 1 ? 'worker' : `worker${index + 1}`);
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const PEER_PREFIX = '5539';
/** `--cpu-prof <dir>`: write a V8 CPU profile of each child process there (to see what limits throughput). */
const CPU_PROF = args.get('cpu-prof');
/** `--window-prof <dir>`: a V8 CPU profile of each worker and of the bare side over the sends only (no start-up, no connect). */
const WINDOW_PROF = args.get('window-prof');
/** `--floor 0` skips the floor under ours (runFloor(); on by default). */
const FLOOR = args.get('floor') !== '0';
/** `--otlp 1`: ours with tracing on, exporting to a loopback collector (off by default: the cost of tracing off is what runs measure). */
const OTLP = args.get('otlp') === '1';

/** A loopback OTLP/HTTP collector (`--otlp 1`): counts the exports, spans and bytes it takes. */
async function startOtlpCollector(): Promise<{ url: string; counts: { exports: number; spans: number; bytes: number }; close(): void }> {
  const counts = { exports: 0, spans: 0, bytes: 0 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      counts.exports++;
      counts.bytes += body.length;
      try {
        const exported = JSON.parse(body.toString('utf8')) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: unknown[] }> }> };
        for (const resource of exported.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) counts.spans += scope.spans?.length ?? 0;
      } catch {
        // Not JSON: counted as an export, its spans unknown.
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, counts, close: () => server.close() };
}

/** Tracing on in ours' processes when the orchestrator set the endpoint (`--otlp 1`); a no-op otherwise. */
async function startTracingFromEnv(): Promise<void> {
  const { EnvReader, readTracingConfig, startTracing } = await import('@gw/platform');
  startTracing(readTracingConfig(new EnvReader(process.env)));
}

/** The CPU profile of this process over the measured sends (`--window-prof`). */
const windowProfile = windowProfiler();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[send:${role}] ${line}\n`);
const peerPhone = (index: number) => `${PEER_PREFIX}${String(index % PEERS).padStart(6, '0')}`;
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Busy and total jiffies of all cores so far (/proc/stat's first line), or null off Linux. */
function machineJiffies(): { busy: number; total: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = fields[3] + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** CPU ticks (user + system, 10 ms each) of every process now, summed by what the process is. */
function cpuTicksByProcess(): Map<string, number> {
  const ticks = new Map<string, number>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return ticks;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      const used = Number(fields[11]) + Number(fields[12]);
      if (!used) continue;
      let label = stat.slice(stat.indexOf('(') + 1, close);
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const script = argv.findIndex((arg) => arg.endsWith('bench/send/main.js'));
      if (script >= 0) label = argv[script + 1] && !argv[script + 1].startsWith('--') ? argv[script + 1] : 'orchestrate';
      ticks.set(label, (ticks.get(label) ?? 0) + used);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks;
}

/**
 * Runs `count` operations with at most CONCURRENCY in flight; operation i goes to instance i % INSTANCES
 * and peer i % PEERS (so each instance always talks to the same peer: warm-up covers every pair). With
 * `ratePerSecond`, operation i starts no earlier than i / rate seconds in (the floor's hops, at ours' rate).
 */
async function drive(count: number, operation: (index: number) => Promise<void>, ratePerSecond?: number): Promise<LoadResult> {
  const latencies: number[] = [];
  let failed = 0;
  let firstError: string | undefined;
  let next = 0;
  const jiffiesBefore = machineJiffies();
  const processesBefore = cpuTicksByProcess();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) {
        const index = next++;
        // Paced: operation i starts no earlier than i / rate seconds in.
        const wait = ratePerSecond ? (index * 1000) / ratePerSecond - Number(process.hrtime.bigint() - started) / 1e6 : 0;
        if (wait > 0) await sleep(wait);
        const t0 = process.hrtime.bigint();
        try {
          await operation(index);
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        } catch (error) {
          failed++;
          firstError ??= String((error as Error)?.message ?? error);
        }
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const jiffiesAfter = machineJiffies();
  const processesAfter = cpuTicksByProcess();
  const byProcess: Record<string, number> = {};
  for (const [label, after] of processesAfter) {
    const ms = ((after - (processesBefore.get(label) ?? 0)) * 10) / Math.max(1, count);
    if (ms >= 0.01) byProcess[label] = round(ms, 2);
  }
  // USER_HZ is 100 on Linux: one jiffy is 10 ms of one core.
  const machine =
    jiffiesBefore && jiffiesAfter
      ? {
          machineCpuMsPerSend: round(((jiffiesAfter.busy - jiffiesBefore.busy) * 10) / Math.max(1, count), 2),
          machineBusyPercent: round((100 * (jiffiesAfter.busy - jiffiesBefore.busy)) / Math.max(1, jiffiesAfter.total - jiffiesBefore.total)),
          machineCpuMsPerSendBy: Object.fromEntries(Object.entries(byProcess).sort((a, b) => b[1] - a[1])),
        }
      : {};
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies.length ? round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]) : 0);
  return {
    sent: latencies.length,
    failed,
    ...(firstError ? { firstError } : {}),
    seconds: round(seconds, 2),
    perSecond: round(latencies.length / seconds),
    p50Ms: at(0.5),
    p90Ms: at(0.9),
    p99Ms: at(0.99),
    maxMs: latencies.length ? round(latencies[latencies.length - 1]) : 0,
    ...machine,
  };
}

async function warmUpThenMeasure(operation: (index: number) => Promise<void>, afterWarmUp?: () => Promise<void>): Promise<LoadResult> {
  for (let round = 0; round < WARMUP; round++) {
    const warm = await drive(INSTANCES, operation);
    log(`warm-up round ${round + 1}: ${warm.sent} sent, ${warm.failed} failed${warm.firstError ? ` (${warm.firstError})` : ''}, p50 ${warm.p50Ms} ms`);
  }
  await afterWarmUp?.();
  log(`measuring ${N} sends, concurrency ${CONCURRENCY}`);
  return drive(N, operation);
}

function send(message: unknown): void {
  process.send?.(message);
}

// --- the simulator process ------------------------------------------------------------------------

async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const sim = await startSimulator({ logLevel: 'silent', phoneDecrypt: false, initialPrekeyCount: 1000, media: false });
  const info: SimInfo = { websocketUrl: sim.websocketUrl, controlUrl: sim.controlUrl, rootPublicKey: sim.rootPublicKey };
  // The peers every sender writes to: plain phone accounts.
  for (let i = 0; i < PEERS; i++) await simControl(info, 'POST', '/sim/accounts', { phone: peerPhone(i) });
  send(info);
  process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
}

// --- bare Baileys ---------------------------------------------------------------------------------

async function runBare(sim: SimInfo): Promise<SideResult> {
  const baileys = await import('@whiskeysockets/baileys');
  baileys.WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(sim.rootPublicKey, 'base64');
  const devices = await provisionDevices(sim, INSTANCES, '5531');
  const logger = pino({ level: 'silent' });
  const started = Date.now();
  const { sockets, open } = await openBareSockets(baileys, devices, sim.websocketUrl, logger);
  const connectSeconds = (Date.now() - started) / 1000;
  log(`${open}/${INSTANCES} sockets open in ${connectSeconds} s`);
  await sleep(2000);

  // One ack listener per socket, dispatching by message id.
  const waiting = sockets.map((sock) => serverAcks(sock));
  const operation = async (index: number) => {
    const slot = index % INSTANCES;
    const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
    const acked = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting[slot].delete(messageId);
        reject(new Error('no server ack in 30 s'));
      }, 30_000);
      waiting[slot].set(messageId, (error) => {
        clearTimeout(timer);
        if (error) reject(new Error(`ack error ${error}`));
        else resolve();
      });
    });
    try {
      await sockets[slot].sendMessage(`${peerPhone(index)}@s.whatsapp.net`, { text: `bench message ${index}` }, { messageId });
    } catch (error) {
      waiting[slot].delete(messageId);
      acked.catch(() => undefined);
      throw error;
    }
    await acked;
  };
  const cpu = process.cpuUsage();
  if (WINDOW_PROF) await windowProfile.start();
  const result = await warmUpThenMeasure(operation);
  if (WINDOW_PROF) await windowProfile.stop(`${WINDOW_PROF}/bare.window.cpuprofile`);
  const used = process.cpuUsage(cpu);
  for (const sock of sockets) sock.end(undefined);
  return { connected: open, connectSeconds, ...result, cpuMsPerSend: round((used.user + used.system) / 1000 / (N + WARMUP * INSTANCES), 2) };
}

// --- our stack: the gateway HTTP app and the session worker ------------------------------------------

interface OursReady {
  baseUrl: string;
  tokens: string[];
  connected: number;
  connectSeconds: number;
  /** The Postgres schema of the run (the orchestrator analyzes it after the warm-up). */
  schema: string;
}

/** What one of ours' processes measured, from the orchestrator's ready until every send's event was written. */
interface ProcessMeasure {
  cpuMs: number;
  eventLoopUtilization: number;
  queries: number;
  poolWaitingAvg: number;
}

/** What ours answers when the orchestrator says it is done: both processes summed, and each. */
interface OursMeasured {
  eventsWritten: number;
  eventsDrainSeconds: number;
  queries: number;
  cpuMs: number;
  poolWaitingAvg: number;
  byProcess: Record<string, ProcessMeasure>;
  failedStatements: Record<string, number>;
  top: Array<[string, number]>;
}

/** Counts the process's SQL until `stop()`; auth key reads by key type (Baileys asks for some types on every send). */
const countSendStatements = () =>
  countStatements({
    width: 140,
    key: (text, call) => (text.startsWith('SELECT key_id') ? `${text} [${String((call[1] as unknown[])?.[1])}]` : text),
    failures: true,
  });

/** Statements waiting for a pooled connection, sampled every 50 ms: a saturated pool shows up here, not in CPU. */
function samplePoolWaiting(dataSource: DataSource): { stop(): number } {
  const pool = (dataSource.driver as unknown as { master: { waitingCount: number } }).master;
  const waiting: number[] = [];
  const sampler = setInterval(() => waiting.push(pool.waitingCount), 50);
  return {
    stop: () => {
      clearInterval(sampler);
      return waiting.length ? round(waiting.reduce((a, b) => a + b, 0) / waiting.length) : 0;
    },
  };
}

const addTo = (into: Map<string, number>, entries: Iterable<[string, number]>) => {
  for (const [key, n] of entries) into.set(key, (into.get(key) ?? 0) + n);
};

async function runOurs(sim: SimInfo, databaseUrl: string): Promise<void> {
  const { openDatabase } = await import('@gw/persistence');
  const { InProcessBus, NatsBus } = await import('@gw/bus');
  const { EnvReader } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/http-app');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: POOL });
  const workerProcesses: ChildProcess[] = [];
  try {
    const devices = await provisionDevices(sim, INSTANCES, '5532');
    const tokens: string[] = [];
    // Instances that are paired and want a session: exactly what a worker adopts after a failover.
    for (const [index, device] of devices.entries()) {
      const id = `rbench${String(index).padStart(8, '0')}`;
      const token = `tok-${id}`;
      await dataSource.query(`INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $3, 'connected', true, $4)`, [
        id,
        token,
        `bench-${index}`,
        device.phone,
      ]);
      await dataSource.query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [id, JSON.stringify(device.creds)]);
      tokens.push(token);
    }
    // split: the worker's process and the gateway's share only NATS (under the run's prefix) and Postgres.
    const prefix = `${schema}.`;
    const bus: Bus = TOPOLOGY === 'split' ? new PrefixedBus(await NatsBus.connect(NATS_URL, 'bench-send-gateway'), prefix) : new InProcessBus();
    const logger = pino({ level: 'silent' });
    // --instances 1 puts every send on one token: the limiter still runs, but never refuses.
    const config = loadGatewayConfig(
      new EnvReader({ DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent', RPC_TIMEOUT_MS: '30000', RATE_LIMIT_INSTANCE: '1000000/s' }),
      [],
    );
    const app = await createHttpApp({ config, dataSource, bus, logger });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.getHttpServer().address() as { port: number };
    const started = Date.now();
    let worker: { stop(): Promise<void> } | undefined;
    if (TOPOLOGY === 'split') {
      // Their stdout is not ours: libsignal prints there. Each CPU profile (--cpu-prof) is a file of its own.
      for (let index = 0; index < WORKERS; index++) {
        const execArgv = process.execArgv.map((flag) => (flag.startsWith('--cpu-prof-name=') ? `--cpu-prof-name=${workerName(index)}.cpuprofile` : flag));
        const passed = [
          '--instances',
          String(INSTANCES),
          '--pool',
          String(POOL),
          '--workers',
          String(WORKERS),
          '--worker-index',
          String(index),
          ...(WINDOW_PROF ? ['--window-prof', WINDOW_PROF] : []),
        ];
        workerProcesses.push(fork(process.argv[1], ['worker', ...passed], { execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
      }
      await Promise.all(workerProcesses.map((child) => ask(child, 'start', { setup: { databaseUrl, schema, prefix, sim } satisfies WorkerSetup }, 60_000)));
    } else {
      worker = await startSessionWorker(dataSource, bus, sim, logger, { workerId: 'bench-worker', capacity: INSTANCES });
    }
    let connected = 0;
    const deadline = Date.now() + 300_000;
    while (Date.now() < deadline) {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`SELECT count(*)::int AS n FROM instances WHERE status = 'connected'`);
      connected = n;
      if (connected >= INSTANCES) break;
      await sleep(250);
    }
    const connectSeconds = (Date.now() - started) / 1000;
    log(`${connected}/${INSTANCES} instances connected in ${connectSeconds} s (${TOPOLOGY})`);
    await sleep(2000);
    // Count the SQL the sends cost, in this process and the worker's.
    const counter = await countSendStatements();
    // The orchestrator says how many sends it made; their `messages` events are the last writes of the path.
    const stopped = new Promise<number>((resolve) => process.once('message', (message) => resolve(Number((message as { sends?: number }).sends) || 0)));
    const workersFrom = await Promise.all(workerProcesses.map((child) => ask<LoadMark>(child, 'measure')));
    if (WINDOW_PROF) await windowProfile.start();
    const from = loadMark();
    const poolWaiting = samplePoolWaiting(dataSource);
    send({ baseUrl: `http://127.0.0.1:${address.port}`, tokens, connected, connectSeconds, schema } satisfies OursReady);
    const sends = await stopped;
    if (WINDOW_PROF) await windowProfile.stop(`${WINDOW_PROF}/${workerProcesses.length ? 'gateway' : 'gateway+worker'}.window.cpuprofile`);
    // Work the path deferred counts too: wait (up to 60 s) until every send's `messages` event is in
    // the outbox, and report how long after the last answer that took.
    const drainStarted = Date.now();
    let events = 0;
    while (Date.now() - drainStarted < 60_000) {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`${UNCOUNTED} SELECT count(*)::int AS n FROM outbox_events WHERE event_type = 'messages'`);
      events = n;
      if (events >= sends) break;
      await sleep(20);
    }
    const eventsDrainSeconds = round((Date.now() - drainStarted) / 1000, 2);
    const statements = counter.stop();
    const failed = counter.failed();
    const load = loadBetween(from, loadMark());
    const byProcess: Record<string, ProcessMeasure> = {
      [workerProcesses.length ? 'gateway' : 'gateway+worker']: {
        cpuMs: load.cpuMs,
        eventLoopUtilization: round(load.eventLoopUtilization, 2),
        queries: [...statements.values()].reduce((a, b) => a + b, 0),
        poolWaitingAvg: poolWaiting.stop(),
      },
    };
    for (const [index, child] of workerProcesses.entries()) {
      const measured = await ask<LoadMark & { statements: Array<[string, number]>; failed: Array<[string, number]>; poolWaitingAvg: number }>(
        child,
        'measured',
      );
      const workerLoad = loadBetween(workersFrom[index], measured);
      byProcess[workerName(index)] = {
        cpuMs: workerLoad.cpuMs,
        eventLoopUtilization: round(workerLoad.eventLoopUtilization, 2),
        queries: measured.statements.reduce((a, [, n]) => a + n, 0),
        poolWaitingAvg: measured.poolWaitingAvg,
      };
      addTo(statements, measured.statements);
      addTo(failed, measured.failed);
    }
    const processes = Object.values(byProcess);
    send({
      eventsWritten: events,
      eventsDrainSeconds,
      queries: processes.reduce((a, p) => a + p.queries, 0),
      cpuMs: processes.reduce((a, p) => a + p.cpuMs, 0),
      poolWaitingAvg: round(processes.reduce((a, p) => a + p.poolWaitingAvg, 0)),
      byProcess,
      failedStatements: Object.fromEntries(failed),
      top: [...statements.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40),
    } satisfies OursMeasured);
    await app.close();
    await Promise.all(workerProcesses.map((child) => stopChild(child)));
    await worker?.stop();
    await bus.close();
  } finally {
    // The worker's process first: the schema goes with its tables.
    await Promise.all(workerProcesses.map((child) => stopChild(child).catch(() => undefined)));
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

/**
 * The worker's process (split): the session worker as apps/session-worker runs it; it counts its
 * statements and marks its load when the gateway's process asks.
 */
function runWorker(): void {
  let counter: Awaited<ReturnType<typeof countSendStatements>> | undefined;
  let poolWaiting: { stop(): number } | undefined;
  serveWorkerChild({
    natsName: 'bench-send-worker',
    poolSize: POOL,
    logger: pino({ level: 'silent' }),
    worker: { workerId: WORKERS === 1 ? 'bench-worker' : `bench-worker-${WORKER_INDEX + 1}`, capacity: Math.ceil(INSTANCES / WORKERS) },
    measure: async (dataSource) => {
      if (WINDOW_PROF) await windowProfile.start();
      counter = await countSendStatements();
      poolWaiting = samplePoolWaiting(dataSource);
      return loadMark();
    },
    measured: async () => {
      if (WINDOW_PROF) await windowProfile.stop(`${WINDOW_PROF}/${workerName(WORKER_INDEX)}.window.cpuprofile`);
      return {
        ...loadMark(),
        statements: [...(counter?.stop() ?? new Map<string, number>()).entries()],
        failed: [...(counter?.failed() ?? new Map<string, number>()).entries()],
        poolWaitingAvg: poolWaiting?.stop() ?? 0,
      };
    },
  });
}

/** A request ours answered and its answer, as sent and received: the bytes the floor's hops carry. */
const oursSample = { request: '', reply: '' };

/** The HTTP client for ours: undici with keep-alive, one connection per concurrent request. */
async function driveOurs(ready: OursReady, databaseUrl: string): Promise<LoadResult> {
  const { Agent, request } = await import('undici');
  const pg = await import('pg');
  const agent = new Agent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 60_000 });
  const url = `${ready.baseUrl}/send/text`;
  const operation = async (index: number) => {
    const body = JSON.stringify({ number: peerPhone(index), text: `bench message ${index}` });
    const response = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', token: ready.tokens[index % INSTANCES] },
      body,
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
    oursSample.request = body;
    oursSample.reply = text;
  };
  // The tables' statistics as a live database has them before the measured sends (analyzeSchema).
  const analyze = async () => {
    const client = new (pg.default?.Client ?? pg.Client)({ connectionString: databaseUrl });
    await client.connect();
    try {
      await analyzeSchema({ query: async (sql: string, parameters?: unknown[]) => (await client.query(sql, parameters)).rows }, ready.schema);
    } finally {
      await client.end();
    }
  };
  try {
    return await warmUpThenMeasure(operation, analyze);
  } finally {
    await agent.close();
  }
}

// --- the floor: the hops our architecture adds to bare Baileys, bare, at ours' rate ----------------------

/** What the floor's chain measured. */
interface FloorChain {
  /** Machine CPU (every process, the kernel's work included) per operation, as machineCpuMsPerSend. */
  machineCpuMsPerOp?: number;
  machineBusyPercent?: number;
  /** machineCpuMsPerOp by process: orchestrate (the HTTP client), hop-http, nats-server, hop-nats, postgres… */
  machineCpuMsPerOpBy?: Record<string, number>;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  firstError?: string;
}

/**
 * The floor under ours: the deployed architecture's hops with no code of ours on them, at ours' own
 * rate (paced: as many wake-ups per second as ours had, not the batching of a loop flat out), the same
 * N and concurrency, carrying the bytes ours carried. One operation is the HTTP client's request
 * (undici, keep-alive, as driveOurs) → a bare node:http server in a process of its own → a NATS request
 * → a bare responder in a process of its own (as gateway → worker) → one durable commit (an autocommit
 * INSERT of one row, prepared, from a pool of `--pool` connections: the least a ledger durable before
 * the socket writes costs; group commit shares commits among sends, so ours' can cost less) → ours'
 * reply back the same way. With `--topology single` (no bus between two processes) the HTTP server
 * commits itself: no NATS hop. `machineCpuMsPerSend` adds bare Baileys' machine CPU per send: what this
 * machine spends per send on these hops and Baileys before any code of ours runs.
 */
async function runFloor(ratePerSecond: number, bare: LoadResult, databaseUrl: string): Promise<Record<string, unknown>> {
  const hopChild = async (hopRole: Role, setup: Record<string, unknown>) => {
    const proc = fork(process.argv[1], [hopRole], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const ready = firstMessage<Record<string, unknown>>(proc);
    proc.send(setup);
    return { proc, ready: await ready };
  };
  const schema = `bench_floor_${randomBytes(4).toString('hex')}`;
  const subject = `${schema}.send`;
  const pg = await import('pg');
  const admin = new (pg.default?.Client ?? pg.Client)({ connectionString: databaseUrl });
  await admin.connect();
  const children: ChildProcess[] = [];
  const { Agent, request } = await import('undici');
  const agent = new Agent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 60_000 });
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.query(
      `CREATE TABLE "${schema}".sends (id text PRIMARY KEY, instance_id text NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
    );
    const setup: HopSetup = { reply: oursSample.reply, databaseUrl, schema };
    if (TOPOLOGY === 'split') {
      const responder = await hopChild('hop-nats', { ...setup, subject, natsUrl: NATS_URL });
      children.push(responder.proc);
    }
    const http = await hopChild('hop-http', TOPOLOGY === 'split' ? { ...setup, subject, natsUrl: NATS_URL } : { ...setup });
    children.push(http.proc);
    const url = `http://127.0.0.1:${String(http.ready.port)}/send/text`;
    const operation = async () => {
      const response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', token: 'tok-floor' },
        body: oursSample.request,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
    };
    await drive(INSTANCES, operation);
    const result = await drive(N, operation, ratePerSecond);
    log(`floor: ${JSON.stringify(result)}`);
    const chain: FloorChain = {
      machineCpuMsPerOp: result.machineCpuMsPerSend,
      machineBusyPercent: result.machineBusyPercent,
      machineCpuMsPerOpBy: result.machineCpuMsPerSendBy,
      perSecond: result.perSecond,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      failed: result.failed,
      ...(result.firstError ? { firstError: result.firstError } : {}),
    };
    return {
      ratePerSecond: round(ratePerSecond),
      chain,
      machineCpuMsPerSend:
        bare.machineCpuMsPerSend !== undefined && chain.machineCpuMsPerOp !== undefined ? round(bare.machineCpuMsPerSend + chain.machineCpuMsPerOp, 2) : null,
    };
  } finally {
    await agent.close();
    for (const proc of children) proc.kill();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

/** What a hop of the floor is told: ours' reply, where to commit, and (split) the NATS subject it serves or passes requests on to. */
interface HopSetup {
  reply: string;
  databaseUrl: string;
  schema: string;
  subject?: string;
  natsUrl?: string;
}

/** The floor's one durable commit per send: an autocommit INSERT of one row, prepared, from a pool of `--pool` connections. */
async function floorCommitter(setup: HopSetup): Promise<(number: string) => Promise<void>> {
  const pg = await import('pg');
  const pool = new (pg.default?.Pool ?? pg.Pool)({ connectionString: setup.databaseUrl, max: POOL });
  const text = `INSERT INTO "${setup.schema}".sends (id, instance_id, status) VALUES ($1, $2, 'reserved')`;
  let sequence = 0;
  return async (number) => {
    await pool.query({ name: 'floor-insert', text, values: [`3EB0${++sequence}`, number] });
  };
}

/**
 * The floor's bare HTTP server. Split: passes each request's body on as a NATS request (to the
 * responder, as the gateway to the worker) and answers with its reply; single: commits itself and
 * answers ours' reply (one process, as `--topology single`).
 */
function runHopHttp(): void {
  process.once('message', (setup: HopSetup) => {
    void (async () => {
      let answer: (body: string) => Promise<string>;
      if (setup.subject && setup.natsUrl) {
        const { connect } = await import('@nats-io/transport-node');
        const connection = await connect({ servers: setup.natsUrl.split(','), noAsyncTraces: true });
        const subject = setup.subject;
        answer = async (body) => (await connection.request(subject, body, { timeout: 30_000 })).string();
      } else {
        const commit = await floorCommitter(setup);
        answer = async (body) => {
          await commit(String((JSON.parse(body) as { number?: string }).number));
          return setup.reply;
        };
      }
      const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          JSON.parse(body);
          answer(body).then(
            (text) => {
              res.setHeader('content-type', 'application/json');
              res.end(text);
            },
            (error: unknown) => {
              res.statusCode = 500;
              res.end(String((error as Error)?.message ?? error));
            },
          );
        });
      });
      server.listen(0, '127.0.0.1', () => send({ port: (server.address() as AddressInfo).port }));
    })();
  });
}

/** The floor's bare NATS responder (split): one durable commit per request, then ours' reply. */
function runHopNats(): void {
  process.once('message', (setup: HopSetup) => {
    void (async () => {
      const { connect } = await import('@nats-io/transport-node');
      const commit = await floorCommitter(setup);
      const connection = await connect({ servers: String(setup.natsUrl).split(','), noAsyncTraces: true });
      connection.subscribe(String(setup.subject), {
        callback: (error, message) => {
          if (error) return;
          const input = JSON.parse(message.string()) as { number?: string };
          commit(String(input.number)).then(
            () => message.respond(setup.reply),
            () => undefined,
          );
        },
      });
      await connection.flush();
      send({ ready: true });
    })();
  });
}

// --- orchestration --------------------------------------------------------------------------------

function child(roleName: Role, extra: string[] = []): ChildProcess {
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
  ];
  const execArgv = [
    '--expose-gc',
    ...(CPU_PROF && roleName !== 'sim' ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`, `--cpu-prof-name=${roleName}.cpuprofile`] : []),
  ];
  return fork(process.argv[1], [roleName, ...passed, ...extra], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function firstMessage<T>(proc: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child exited with ${code} before answering`));
    proc.once('exit', onExit);
    proc.once('message', (message) => {
      proc.off('exit', onExit);
      resolve(message as T);
    });
  });
}

async function orchestrate(): Promise<void> {
  const directUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const dbProxy = DB_RTT_MS > 0 ? await startDbProxyChild(directUrl, DB_RTT_MS) : undefined;
  const databaseUrl = dbProxy?.url ?? directUrl;
  const dbRoundTripMs = dbProxy ? { direct: await medianRoundTripMs(directUrl), proxied: await medianRoundTripMs(dbProxy.url) } : undefined;
  const simProcess = child('sim');
  const sim = await firstMessage<SimInfo>(simProcess);
  try {
    log('bare side');
    const bareProcess = child('bare', ['--sim', JSON.stringify(sim)]);
    const bare = await firstMessage<SideResult>(bareProcess);
    const bareExited = new Promise((resolve) => bareProcess.once('exit', resolve));
    bareProcess.disconnect();
    await Promise.race([bareExited, sleep(5_000)]);
    bareProcess.kill();
    log(`bare: ${JSON.stringify(bare)}`);

    log('ours side');
    // --otlp 1: ours' processes (and the worker children they fork) inherit the endpoint and trace every send.
    const otlp = OTLP ? await startOtlpCollector() : undefined;
    if (otlp) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.url;
    const oursProcess = child('ours', ['--sim', JSON.stringify(sim), '--db', databaseUrl]);
    if (otlp) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    const ready = await firstMessage<OursReady>(oursProcess);
    const load = await driveOurs(ready, databaseUrl);
    const exited = new Promise((resolve) => oursProcess.once('exit', resolve));
    const sql = firstMessage<OursMeasured>(oursProcess).catch(() => undefined);
    oursProcess.send({ sends: load.sent + load.failed + WARMUP * INSTANCES });
    const counted = await Promise.race([sql, sleep(15_000).then(() => undefined)]);
    await Promise.race([exited, sleep(15_000)]);
    oursProcess.kill();
    const sends = load.sent + load.failed + WARMUP * INSTANCES;
    if (counted) log(`SQL statements during the sends (incl. warm-up and background work): ${counted.queries}, top: ${JSON.stringify(counted.top, null, 1)}`);
    const perSend = (of: (measure: ProcessMeasure) => number, digits = 2) =>
      Object.fromEntries(Object.entries(counted?.byProcess ?? {}).map(([name, measure]) => [name, round(of(measure) / sends, digits)]));
    const byProcess = (of: (measure: ProcessMeasure) => number) =>
      Object.fromEntries(Object.entries(counted?.byProcess ?? {}).map(([name, measure]) => [name, of(measure)]));
    const ours: SideResult & {
      /** Per process: `gateway` and `worker` (split), or `gateway+worker` (single). */
      cpuMsPerSendByProcess?: Record<string, number>;
      sqlPerSend?: number;
      sqlPerSendByProcess?: Record<string, number>;
      eventLoopUtilizationByProcess?: Record<string, number>;
      poolWaitingAvg?: number;
      poolWaitingAvgByProcess?: Record<string, number>;
      failedStatements?: Record<string, number>;
      eventsWritten?: number;
      eventsDrainSeconds?: number;
    } = {
      connected: ready.connected,
      connectSeconds: ready.connectSeconds,
      ...load,
      ...(counted
        ? {
            cpuMsPerSend: round(counted.cpuMs / sends, 2),
            cpuMsPerSendByProcess: perSend((measure) => measure.cpuMs),
            sqlPerSend: round(counted.queries / sends, 2),
            sqlPerSendByProcess: perSend((measure) => measure.queries),
            eventLoopUtilizationByProcess: byProcess((measure) => measure.eventLoopUtilization),
            poolWaitingAvg: counted.poolWaitingAvg,
            poolWaitingAvgByProcess: byProcess((measure) => measure.poolWaitingAvg),
            failedStatements: counted.failedStatements,
            eventsWritten: counted.eventsWritten,
            eventsDrainSeconds: counted.eventsDrainSeconds,
          }
        : {}),
    };
    log(`ours: ${JSON.stringify(ours)}`);
    otlp?.close();
    const traced = otlp ? { ...otlp.counts, spansPerSend: round(otlp.counts.spans / sends, 2) } : undefined;

    const floor = FLOOR && ours.perSecond > 0 && oursSample.reply ? await runFloor(ours.perSecond, bare, databaseUrl) : undefined;
    const ratio = round(ours.perSecond / Math.max(0.001, bare.perSecond), 2);
    process.stdout.write(
      `${JSON.stringify({
        bench: 'send',
        topology: TOPOLOGY,
        workers: WORKERS,
        instances: INSTANCES,
        peers: PEERS,
        n: N,
        concurrency: CONCURRENCY,
        dbRttMs: DB_RTT_MS,
        ...(dbRoundTripMs ? { dbRoundTripMs } : {}),
        node: process.version,
        bare,
        ours,
        ...(floor ? { floor } : {}),
        ...(traced ? { otlp: traced } : {}),
        ratio,
        cpuRatio: bare.cpuMsPerSend && ours.cpuMsPerSend ? round(ours.cpuMsPerSend / bare.cpuMsPerSend, 2) : null,
        machineCpuRatio: bare.machineCpuMsPerSend && ours.machineCpuMsPerSend ? round(ours.machineCpuMsPerSend / bare.machineCpuMsPerSend, 2) : null,
        goal: 'ours.perSecond >= 0.8 * bare.perSecond',
        met: ratio >= 0.8 && ours.failed === 0 && bare.failed === 0 && ours.connected === INSTANCES && bare.connected === INSTANCES,
      })}\n`,
    );
  } finally {
    simProcess.disconnect();
    dbProxy?.stop();
  }
}

async function main(): Promise<void> {
  if (role === DB_PROXY_ROLE) return serveDbProxyChild(args);
  if (role === 'sim') return runSim();
  if (role === 'bare') {
    send(await runBare(JSON.parse(args.get('sim') as string) as SimInfo));
    process.once('disconnect', () => process.exit(0));
    return;
  }
  if (role === 'worker') {
    await startTracingFromEnv();
    return runWorker();
  }
  if (role === 'hop-http') return runHopHttp();
  if (role === 'hop-nats') return runHopNats();
  if (role === 'ours') {
    await startTracingFromEnv();
    await runOurs(JSON.parse(args.get('sim') as string) as SimInfo, args.get('db') as string);
    process.exit(0);
  }
  await orchestrate();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
