/**
 * bench/webhooks: the webhook relay (outbox → webhook_deliveries → HTTP POST) under load. Events go
 * into the outbox at a steady rate for a while, then as one burst, spread over several instances and
 * chats (delivery is ordered per (webhook, instance, chat) lane). A loopback receiver in a process of
 * its own records event-to-delivery latency from the creation time each payload carries. Next to it,
 * in the same run, a bare undici client (keep-alive, the relay's concurrency towards one receiver)
 * posts the same bodies to the same receiver.
 *
 *   npm run bench -- webhooks [--seconds 60] [--rate 1000] [--burst 20000] [--instances 20] [--chats 10]
 *                             [--batch 500] [--run 20] [--inflight 8] [--poll 1000] [--gap 10 (ms between fan-outs, and between claims)] [--pool 0 (= inflight + 4)]
 *                             [--stall 20 (s without progress before a phase gives up)] [--wait 300 (s at most per phase)]
 *                             [--warm 1 (0: start the relay cold, without its warmUp)]
 *
 * `burst.inFlight`: requests in flight from the burst's start to its last answer, relay and bare
 * (mean, share of the time at the limit, ms to the first request): does the relay keep its concurrency busy?
 *
 * Processes: this one feeds the outbox (and orchestrates); the relay runs in a child, the bare client
 * in another, the receiver in a third. Prints one JSON object. Goals (issue #38): burst ≥ 0.6 × the
 * bare client's deliveries/s in the same run, p99 ≤ 50 ms at 1,000 events/s. Besides time, it prints
 * what the machine's load does not inflate: relay CPU and SQL statements per delivery, and the
 * Postgres buffers the run touched per delivery in the relay's two tables (pg_statio, read at the end).
 *
 * `--sink rabbitmq` (issue #18) measures the RabbitMQ event sink instead: the instances get a RabbitMQ
 * sink (the same relay, lanes per instance, publisher confirms) and the receiver is a consumer of a
 * queue bound to the bench's exchange; the bare client is an amqplib publish loop with confirms and
 * the same concurrency. AMQP_URL (default amqp://guest:guest@127.0.0.1:5672) names the broker.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';

type Role = 'orchestrate' | 'receiver' | 'relay' | 'bare';
type Phase = 'relay-steady' | 'relay-burst' | 'bare-steady' | 'bare-burst';

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const num = (name: string, fallback: number) => (args.has(name) ? Number(args.get(name)) : fallback);

const SECONDS = num('seconds', 60);
const RATE = num('rate', 1000);
const BURST = num('burst', 20_000);
const INSTANCES = num('instances', 20);
const CHATS = num('chats', 10);
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SINK = (args.get('sink') ?? 'webhook') as 'webhook' | 'rabbitmq';
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message: string) => process.stderr.write(`[webhooks] ${message}\n`);

interface EventPayload {
  EventType: 'messages';
  phase: Phase;
  seq: number;
  lane: string;
  createdAt: number;
  instanceName: string;
  owner: string;
  message: Record<string, unknown>;
}

/** The n-th event of a phase: round-robin over instances, then chats, so every lane gets traffic. */
function eventFor(phase: Phase, seq: number, createdAt: number): { instance: number; chat: string; payload: EventPayload } {
  const instance = seq % INSTANCES;
  const chat = `55119${String(Math.floor(seq / INSTANCES) % CHATS).padStart(8, '0')}@s.whatsapp.net`;
  return {
    instance,
    chat,
    payload: {
      EventType: 'messages',
      phase,
      seq,
      lane: `${instance}|${chat}`,
      createdAt,
      instanceName: `bench-${instance}`,
      owner: '5511988887777',
      message: {
        chatid: chat,
        messageid: `3EB0${seq.toString(16).toUpperCase().padStart(16, '0')}`,
        fromMe: false,
        messageType: 'Conversation',
        text: `bench message ${seq} of ${phase}`,
        messageTimestamp: createdAt,
        sender: chat,
        senderName: 'Bench',
      },
    },
  };
}

// --- IPC helpers ----------------------------------------------------------------------------------

function send(message: unknown): void {
  process.send?.(message);
}

function spawnRole(roleName: Role, extra: string[] = []): ChildProcess {
  return fork(process.argv[1], [roleName, ...[...args.entries()].flatMap(([key, value]) => [`--${key}`, value]), ...extra], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // WEBHOOKS_PROFILE=<dir> writes a CPU profile of the relay process there.
    execArgv: roleName === 'relay' && process.env.WEBHOOKS_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.WEBHOOKS_PROFILE}`] : [],
  });
}

function nextMessage<T>(child: ChildProcess, match: (message: Record<string, unknown>) => boolean): Promise<T> {
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
async function ask<T>(child: ChildProcess, message: Record<string, unknown>): Promise<T> {
  const id = ++requestId;
  const answer = nextMessage<T>(child, (reply) => reply.id === id);
  child.send({ ...message, id });
  return answer;
}

// --- the receiver process -------------------------------------------------------------------------

interface PhaseStats {
  count: number;
  duplicates: number;
  outOfOrder: number;
  firstAt: number;
  lastAt: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** p99 of the events created in the phase's first COLD_START_MS (a relay just started: cold pool, plans, caches). */
  coldStartP99Ms: number | null;
  /** p99 of the events created in each half second of the phase, in order: where a tail comes from. */
  p99MsByHalfSecond: Array<number | null>;
}

/** The start of a phase measured on its own (`coldStartP99Ms`): a relay restarted during a deploy. */
const COLD_START_MS = 2_000;

/** The q-quantile of ascending `sorted` (nearest rank), null when empty. */
function quantile(sorted: Float64Array, q: number): number | null {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : null;
}

/** Latency quantiles of a phase: all of it, its first COLD_START_MS, and each half second by creation time. */
function latencyStats(latencies: number[], created: number[]): Pick<PhaseStats, 'p50Ms' | 'p99Ms' | 'maxMs' | 'coldStartP99Ms' | 'p99MsByHalfSecond'> {
  const sorted = Float64Array.from(latencies).sort();
  const start = created.reduce((min, at) => Math.min(min, at), Infinity);
  const buckets: number[][] = [];
  const cold: number[] = [];
  latencies.forEach((latency, index) => {
    const offset = created[index] - start;
    if (offset < COLD_START_MS) cold.push(latency);
    (buckets[Math.floor(offset / 500)] ??= []).push(latency);
  });
  return {
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: quantile(sorted, 1),
    coldStartP99Ms: quantile(Float64Array.from(cold).sort(), 0.99),
    p99MsByHalfSecond: Array.from(buckets, (bucket) => (bucket ? quantile(Float64Array.from(bucket).sort(), 0.99) : null)),
  };
}

async function runReceiver(): Promise<void> {
  const phases = new Map<
    string,
    {
      latencies: number[];
      created: number[];
      seen: Set<number>;
      laneLast: Map<string, number>;
      duplicates: number;
      outOfOrder: number;
      firstAt: number;
      lastAt: number;
    }
  >();
  const record = (content: Buffer) => {
    const now = Date.now();
    try {
      const body = JSON.parse(content.toString('utf8')) as EventPayload;
      let stats = phases.get(body.phase);
      if (!stats)
        phases.set(
          body.phase,
          (stats = { latencies: [], created: [], seen: new Set(), laneLast: new Map(), duplicates: 0, outOfOrder: 0, firstAt: now, lastAt: now }),
        );
      if (stats.seen.has(body.seq)) stats.duplicates++;
      else {
        stats.seen.add(body.seq);
        stats.latencies.push(now - body.createdAt);
        stats.created.push(body.createdAt);
      }
      const last = stats.laneLast.get(body.lane) ?? -1;
      if (body.seq < last) stats.outOfOrder++;
      else stats.laneLast.set(body.lane, body.seq);
      stats.lastAt = now;
    } catch {
      // not ours
    }
  };
  let close: () => Promise<void>;
  if (SINK === 'rabbitmq') {
    // A consumer of an exclusive queue bound to the bench's own (durable) exchange, deleted at the end.
    const { connect } = await import('amqplib');
    const connection = await connect(amqpUrl);
    const channel = await connection.createChannel();
    const exchange = `bench-webhooks-${randomBytes(4).toString('hex')}`;
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(queue, exchange, '#');
    await channel.consume(queue, (message) => message && record(message.content), { noAck: true });
    send({ url: amqpUrl, exchange });
    close = async () => {
      await channel.deleteExchange(exchange).catch(() => undefined);
      await connection.close().catch(() => undefined);
    };
  } else {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        record(Buffer.concat(chunks));
        response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
        response.end('ok');
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    send({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  }
  process.on('message', (message: { id: number; cmd: string; phase: string; countOnly?: boolean }) => {
    if (message.cmd !== 'stats') return;
    const stats = phases.get(message.phase);
    if (!stats) {
      send({
        id: message.id,
        stats: {
          count: 0,
          duplicates: 0,
          outOfOrder: 0,
          firstAt: 0,
          lastAt: 0,
          p50Ms: null,
          p99Ms: null,
          maxMs: null,
          coldStartP99Ms: null,
          p99MsByHalfSecond: [],
        } satisfies PhaseStats,
      });
      return;
    }
    send({
      id: message.id,
      stats: {
        count: stats.seen.size,
        duplicates: stats.duplicates,
        outOfOrder: stats.outOfOrder,
        firstAt: stats.firstAt,
        lastAt: stats.lastAt,
        ...(message.countOnly
          ? { p50Ms: null, p99Ms: null, maxMs: null, coldStartP99Ms: null, p99MsByHalfSecond: [] }
          : latencyStats(stats.latencies, stats.created)),
      } satisfies PhaseStats,
    });
  });
  process.on('disconnect', () => void close().finally(() => process.exit(0)));
}

// --- the relay process ----------------------------------------------------------------------------

async function runRelay(): Promise<void> {
  const { DeliveryRepository, InstanceRepository, openDatabase, WebhookRepository } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { Subjects } = await import('@gw/contracts');
  const { createLogger, SsrfGuard } = await import('@gw/platform');
  const { WebhookRelay, WEBHOOK_RELAY_DEFAULTS } = await import('@gw/relay');
  const config = {
    ...WEBHOOK_RELAY_DEFAULTS,
    batchSize: num('batch', WEBHOOK_RELAY_DEFAULTS.batchSize),
    laneRunLength: num('run', WEBHOOK_RELAY_DEFAULTS.laneRunLength),
    maxInFlightPerReceiver: num('inflight', WEBHOOK_RELAY_DEFAULTS.maxInFlightPerReceiver),
    pollIntervalMs: num('poll', WEBHOOK_RELAY_DEFAULTS.pollIntervalMs),
    passGapMs: num('gap', WEBHOOK_RELAY_DEFAULTS.passGapMs),
    publicBaseUrl: 'http://gateway.bench',
    includeToken: false,
    retryScheduleMs: [1_000, 5_000, 30_000],
    ssrf: SsrfGuard.fromList('127.0.0.0/8'),
  };
  const poolSize = num('pool', 0) || config.maxInFlightPerReceiver + 4;
  const dataSource = await openDatabase({ url: databaseUrl, schema: args.get('schema') as string, poolSize, keepConnections: num('warm', 1) === 1 });
  const trace = traceQueries(dataSource);
  const inFlight = inFlightMeter(config.maxInFlightPerReceiver);
  const bus = new InProcessBus();
  // Stands in for NATS: the feeder's OutboxNotice arrives over IPC and is published on the local bus.
  process.on('message', (message: { wake?: string; cmd?: string; id?: number }) => {
    if (message.wake) bus.publish(Subjects.outbox(message.wake), { instanceId: message.wake, lastId: '0' });
    if (message.cmd === 'mark') {
      inFlight.start();
      send({ id: message.id });
    }
    if (message.cmd === 'stop') {
      void (async () => {
        await relay.stop();
        const counts: Array<{ status: string; n: number }> = await dataSource.query(
          `SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`,
        );
        await bus.close();
        await dataSource.destroy();
        send({
          id: message.id,
          deliveries: Object.fromEntries(counts.map((row) => [row.status, row.n])),
          queries: trace.queries(),
          cold: trace.cold(),
          inFlight: inFlight.read(),
          cpuMs: cpuMs(),
        });
        process.exit(0);
      })();
    }
  });
  const relay = new WebhookRelay(
    new DeliveryRepository(dataSource),
    new WebhookRepository(dataSource),
    new InstanceRepository(dataSource),
    bus,
    config,
    createLogger('bench-relay', 'warn'),
  );
  // What the service does before it reports ready (WebhookRelayModule): a cold pool delayed the first second.
  const warmStarted = performance.now();
  if (num('warm', 1)) await relay.warmUp();
  const warmUpMs = Math.round(performance.now() - warmStarted);
  relay.start();
  trace.ready();
  send({
    ready: true,
    settings: {
      batchSize: config.batchSize,
      laneRunLength: config.laneRunLength,
      maxInFlightPerReceiver: config.maxInFlightPerReceiver,
      pollIntervalMs: config.pollIntervalMs,
      passGapMs: config.passGapMs,
      claimMs: config.claimMs,
      requestTimeoutMs: config.requestTimeoutMs,
      poolSize,
      warmUpMs,
    },
  });
}

/** What the relay's pool did once it said it was ready: connections opened, statements run first on their connection. */
interface ColdStats {
  /** Connections the pool opened after the relay said it was ready (each plans its statements afresh). */
  connectionsOpened: number;
  /** Statements that were the first of their kind (or its EXPLAIN, warmUp's) on their connection, and their wait. */
  coldStatements: number;
  coldStatementMs: number;
}

/**
 * Counts the relay's SQL statements by kind (their first words) and the time spent waiting for them,
 * wrapping the query runner every DataSource query and transaction goes through; and, once `ready()`
 * is called, what ran cold (ColdStats): what a loaded machine inflates in time but not in count.
 */
function traceQueries(dataSource: import('typeorm').DataSource): {
  queries: () => Record<string, { count: number; ms: number; empty: number }>;
  ready: () => void;
  cold: () => ColdStats;
} {
  const stats = new Map<string, { count: number; ms: number; empty: number }>();
  const seen = new WeakMap<object, Set<string>>();
  const cold: ColdStats = { connectionsOpened: 0, coldStatements: 0, coldStatementMs: 0 };
  let ready = false;
  const pool = (dataSource.driver as unknown as { master: { on(event: 'connect', listener: () => void): void } }).master;
  pool.on('connect', () => void (ready && cold.connectionsOpened++));
  const runner = dataSource.createQueryRunner();
  const proto = Object.getPrototypeOf(runner) as { query: (this: unknown, sql: string, ...rest: unknown[]) => Promise<unknown> };
  void runner.release();
  const original = proto.query;
  proto.query = async function (this: unknown, sql: string, ...rest: unknown[]) {
    const kind = sql.replace(/\s+/g, ' ').trim().slice(0, 48);
    const connection = (this as { databaseConnection?: object }).databaseConnection;
    const planned = connection ? (seen.get(connection) ?? new Set<string>()) : undefined;
    if (connection && planned && !seen.has(connection)) seen.set(connection, planned);
    const key = sql
      .replace(/^\s*EXPLAIN\s+/, '')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 48);
    const first = planned !== undefined && !planned.has(key);
    planned?.add(key);
    const started = performance.now();
    let rows: unknown;
    try {
      return (rows = await original.call(this, sql, ...rest));
    } finally {
      const ms = performance.now() - started;
      const entry = stats.get(kind) ?? { count: 0, ms: 0, empty: 0 };
      entry.count++;
      entry.ms += ms;
      // Statements that answered no rows (a claim that found nothing still walked every lane).
      if (Array.isArray(rows) && rows.length === 0) entry.empty++;
      stats.set(kind, entry);
      if (ready && first) {
        cold.coldStatements++;
        cold.coldStatementMs += ms;
      }
    }
  };
  return {
    queries: () =>
      Object.fromEntries(
        [...stats].sort((a, b) => b[1].ms - a[1].ms).map(([kind, entry]) => [kind, { count: entry.count, ms: Math.round(entry.ms), empty: entry.empty }]),
      ),
    ready: () => void (ready = true),
    cold: () => ({ ...cold, coldStatementMs: Math.round(cold.coldStatementMs) }),
  };
}

// --- the bare client process ----------------------------------------------------------------------

async function runBare(): Promise<void> {
  const concurrency = num('inflight', 8);
  const inFlight = inFlightMeter(concurrency);
  const url = args.get('url') as string;
  let post: (payload: EventPayload) => Promise<void>;
  let closeClient: () => Promise<void>;
  if (SINK === 'rabbitmq') {
    // A bare amqplib publish loop: a confirm channel, persistent messages, each awaited as the sink does.
    const { connect } = await import('amqplib');
    const connection = await connect(url);
    const channel = await connection.createConfirmChannel();
    const exchange = args.get('exchange') as string;
    let n = 0;
    post = (payload) =>
      new Promise<void>((resolve, reject) => {
        const body = Buffer.from(JSON.stringify({ BaseUrl: 'http://gateway.bench', ...payload }));
        channel.publish(exchange, `bench.messages`, body, { persistent: true, messageId: `bare_${++n}`, contentType: 'application/json' }, (error: unknown) =>
          error ? reject(error as Error) : resolve(),
        );
      });
    closeClient = () => connection.close();
  } else {
    const { Agent, request } = await import('undici');
    const agent = new Agent({ keepAliveTimeout: 10_000 });
    post = async (payload: EventPayload) => {
      const body = JSON.stringify({ BaseUrl: 'http://gateway.bench', ...payload });
      const response = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'bench-bare/1' },
        dispatcher: agent,
      });
      await response.body.text();
    };
    closeClient = () => agent.close();
  }
  /** A queue drained by `concurrency` workers: the relay's in-flight limit towards one receiver. */
  const queue: EventPayload[] = [];
  let active = 0;
  let idle: (() => void) | undefined;
  const pump = () => {
    while (active < concurrency && queue.length) {
      const payload = queue.shift() as EventPayload;
      active++;
      void post(payload)
        .catch((error: unknown) => log(`bare post failed: ${String(error)}`))
        .finally(() => {
          active--;
          pump();
          if (active === 0 && queue.length === 0) idle?.();
        });
    }
  };
  const drained = () => (active === 0 && queue.length === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve)));

  process.on('message', (message: { id: number; cmd: string }) => {
    void (async () => {
      if (message.cmd === 'steady') {
        await paced(RATE, SECONDS, (from, to) => {
          const now = Date.now();
          for (let seq = from; seq < to; seq++) queue.push(eventFor('bare-steady', seq, now).payload);
          pump();
        });
        await drained();
      } else if (message.cmd === 'burst') {
        const now = Date.now();
        inFlight.start();
        for (let seq = 0; seq < BURST; seq++) queue.push(eventFor('bare-burst', seq, now).payload);
        pump();
        await drained();
      } else if (message.cmd === 'stop') {
        await closeClient();
        send({ id: message.id, cpuMs: cpuMs(), inFlight: SINK === 'webhook' ? inFlight.read() : null });
        process.exit(0);
      }
      send({ id: message.id });
    })();
  });
  send({ ready: true });
}

/** CPU time (user + system) this process used so far: a measure the machine's load does not inflate. */
function cpuMs(): number {
  const usage = process.cpuUsage();
  return Math.round((usage.user + usage.system) / 1000);
}

/** Calls `emit(from, to)` every few ms with the events due by then, `rate` per second for `seconds`. */
async function paced(rate: number, seconds: number, emit: (from: number, to: number) => void | Promise<void>): Promise<void> {
  const total = Math.round(rate * seconds);
  const started = Date.now();
  let produced = 0;
  while (produced < total) {
    const due = Math.min(total, Math.floor(((Date.now() - started) * rate) / 1000));
    if (due > produced) {
      const from = produced;
      produced = due;
      await emit(from, due);
    }
    await sleep(5);
  }
}

interface InFlightStats {
  mean: number;
  shareAtLimit: number;
  requests: number;
  /** From start() to the first request (ms). */
  firstRequestMs: number;
}

/**
 * Requests in flight over time, from undici's diagnostics channels (created → response headers, or
 * an error): its time-weighted mean and the share of the time at `limit` or more, from `start()` to
 * the last request's end. Tells whether a client keeps its concurrency busy: the relay and the bare
 * client measure it the same way, at the same small cost. An answer that arrived while the process was
 * busy counts as in flight until it is read, so a busy client looks fuller than it is.
 */
function inFlightMeter(limit: number): { start: () => void; read: () => InFlightStats } {
  let inFlight = 0;
  let active = false;
  let startedAt = 0;
  let lastAt = 0;
  let lastEndAt = 0;
  let area = 0;
  let atLimit = 0;
  let requests = 0;
  let firstAt = 0;
  const tick = () => {
    const now = performance.now();
    if (active) {
      area += (now - lastAt) * inFlight;
      if (inFlight >= limit) atLimit += now - lastAt;
    }
    lastAt = now;
  };
  subscribe('undici:request:create', () => {
    tick();
    inFlight++;
    if (active && requests++ === 0) firstAt = lastAt;
  });
  const end = () => {
    tick();
    inFlight = Math.max(0, inFlight - 1);
    lastEndAt = lastAt;
  };
  subscribe('undici:request:headers', end);
  subscribe('undici:request:error', end);
  return {
    start: () => {
      tick();
      active = true;
      startedAt = lastAt;
      area = 0;
      atLimit = 0;
      requests = 0;
    },
    read: () => {
      const span = Math.max(lastEndAt - startedAt, 0.001);
      return { mean: round(area / span, 2), shareAtLimit: round(atLimit / span, 3), requests, firstRequestMs: round(firstAt - startedAt) };
    },
  };
}

// --- the orchestrator (and outbox feeder) ---------------------------------------------------------

async function waitForDelivery(receiver: ChildProcess, phase: Phase, expected: number, stallMs = num('stall', 20) * 1000): Promise<PhaseStats> {
  let last = -1;
  let lastChange = Date.now();
  let lastLog = Date.now();
  const giveUpAt = Date.now() + num('wait', 300) * 1000;
  // Polled for the count only: sorting every latency each 50 ms took the receiver's CPU from the relay's run.
  const final = async () => (await ask<{ stats: PhaseStats }>(receiver, { cmd: 'stats', phase })).stats;
  for (;;) {
    const { stats } = await ask<{ stats: PhaseStats }>(receiver, { cmd: 'stats', phase, countOnly: true });
    if (stats.count >= expected) return final();
    if (Date.now() - lastLog > 5_000) {
      lastLog = Date.now();
      log(`${phase}: ${stats.count}/${expected} delivered`);
    }
    if (stats.count !== last) {
      last = stats.count;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > stallMs) {
      log(`${phase}: stalled at ${stats.count}/${expected}`);
      return final();
    }
    if (Date.now() > giveUpAt) {
      log(`${phase}: gave up at ${stats.count}/${expected} after --wait`);
      return final();
    }
    await sleep(50);
  }
}

const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Shared buffers (hit or read) the run touched in the relay's two tables and their indexes, per
 * delivery: Postgres' work, which a loaded machine does not inflate as it does time. The relay's
 * connections are closed by now (their backends flushed their statistics); the feeder's inserts count.
 */
async function buffersPerDelivery(
  dataSource: import('typeorm').DataSource,
  schema: string,
  delivered: number,
): Promise<Record<string, { heap: number; index: number }>> {
  const rows: Array<{ relname: string; heap: string; idx: string }> = await dataSource.query(
    `SELECT relname, heap_blks_hit + heap_blks_read AS heap, coalesce(idx_blks_hit + idx_blks_read, 0) AS idx
     FROM pg_statio_user_tables WHERE schemaname = $1 AND relname IN ('outbox_events', 'webhook_deliveries')`,
    [schema],
  );
  const per = (value: string) => round(Number(value) / Math.max(delivered, 1), 1);
  return Object.fromEntries(rows.map((row) => [row.relname, { heap: per(row.heap), index: per(row.idx) }]));
}

async function orchestrate(): Promise<void> {
  const { openDatabase, InstanceRepository, OutboxRepository, WebhookRepository } = await import('@gw/persistence');
  const { generateWebhookSecret } = await import('@gw/relay');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 4 });
  const children: ChildProcess[] = [];
  try {
    const receiver = spawnRole('receiver');
    children.push(receiver);
    const { url, exchange } = await nextMessage<{ url: string; exchange?: string }>(receiver, (message) => typeof message.url === 'string');

    const instanceIds: string[] = [];
    for (let n = 0; n < INSTANCES; n++) {
      const id = `wb${randomBytes(6).toString('hex')}`;
      await new InstanceRepository(dataSource).create({ id, token: `tok-${id}`, name: `bench-${n}` });
      await new WebhookRepository(dataSource).insert(
        `w${randomBytes(6).toString('hex')}`,
        id,
        {
          url,
          enabled: true,
          events: [],
          excludeMessages: [],
          addUrlEvents: false,
          addUrlTypesMessages: false,
          includeToken: false,
          ...(SINK === 'rabbitmq' ? { kind: 'rabbitmq' as const, options: { exchange, routingKey: '{instance}.{event}' } } : {}),
        },
        generateWebhookSecret(),
      );
      instanceIds.push(id);
    }

    const relay = spawnRole('relay', ['--schema', schema]);
    children.push(relay);
    const { settings } = await nextMessage<{ settings: Record<string, number> }>(relay, (message) => message.ready === true);
    log(`relay up: ${JSON.stringify(settings)}; receiver ${url}; schema ${schema}`);

    /** One transaction per tick (the events of every instance due by then), then one notice. */
    let insertMsTotal = 0;
    let insertTx = 0;
    const feed = async (phase: Phase, from: number, to: number) => {
      const createdAt = Date.now();
      const byInstance = new Map<number, Array<{ eventType: string; chatId: string; payload: Record<string, unknown> }>>();
      for (let seq = from; seq < to; seq++) {
        const event = eventFor(phase, seq, createdAt);
        let list = byInstance.get(event.instance);
        if (!list) byInstance.set(event.instance, (list = []));
        list.push({ eventType: 'messages', chatId: event.chat, payload: event.payload as unknown as Record<string, unknown> });
      }
      const started = Date.now();
      await dataSource.transaction(async (manager) => {
        for (const [instance, events] of byInstance) await OutboxRepository.insertWithin(manager, instanceIds[instance], events);
      });
      insertMsTotal += Date.now() - started;
      insertTx++;
      for (const instance of byInstance.keys()) relay.send({ wake: instanceIds[instance] });
    };

    // 1. steady rate through the relay
    log(`relay: ${RATE} events/s for ${SECONDS} s`);
    const steadyStarted = Date.now();
    const progress = setInterval(
      () =>
        void ask<{ stats: PhaseStats }>(receiver, { cmd: 'stats', phase: 'relay-steady', countOnly: true }).then(({ stats }) =>
          log(`relay-steady: ${stats.count} delivered after ${round((Date.now() - steadyStarted) / 1000, 1)} s`),
        ),
      5_000,
    );
    await paced(RATE, SECONDS, (from, to) => feed('relay-steady', from, to));
    clearInterval(progress);
    const feedSeconds = (Date.now() - steadyStarted) / 1000;
    const steadyTotal = Math.round(RATE * SECONDS);
    const relaySteady = await waitForDelivery(receiver, 'relay-steady', steadyTotal);
    log(`relay-steady: ${relaySteady.count}/${steadyTotal}, p50 ${relaySteady.p50Ms} ms, p99 ${relaySteady.p99Ms} ms`);
    const steadyInsertMs = insertTx ? insertMsTotal / insertTx : 0;

    // 2. a burst through the relay, fed as fast as the outbox takes it
    await sleep(1_000);
    log(`relay: burst of ${BURST}`);
    await ask(relay, { cmd: 'mark' });
    const burstStarted = Date.now();
    for (let from = 0; from < BURST; from += 1_000) await feed('relay-burst', from, Math.min(BURST, from + 1_000));
    const burstFedSeconds = (Date.now() - burstStarted) / 1000;
    const relayBurst = await waitForDelivery(receiver, 'relay-burst', BURST);
    const relayBurstSeconds = (relayBurst.lastAt - burstStarted) / 1000;
    log(`relay-burst: ${relayBurst.count}/${BURST} in ${relayBurstSeconds} s (fed in ${burstFedSeconds} s)`);
    const {
      deliveries,
      queries,
      cold,
      inFlight: relayInFlight,
      cpuMs: relayCpuMs,
    } = await ask<{
      deliveries: Record<string, number>;
      queries: Record<string, { count: number; ms: number; empty: number }>;
      cold: ColdStats;
      inFlight: InFlightStats;
      cpuMs: number;
    }>(relay, { cmd: 'stop' });
    const deliveredRows = deliveries.delivered ?? 0;
    const statements = Object.values(queries).reduce((sum, entry) => sum + entry.count, 0);

    // 3. the bare client, same bodies, same receiver, same concurrency
    const bare = spawnRole('bare', ['--url', url, ...(exchange ? ['--exchange', exchange] : [])]);
    children.push(bare);
    await nextMessage(bare, (message) => message.ready === true);
    log(`bare: ${RATE} events/s for ${SECONDS} s`);
    await ask(bare, { cmd: 'steady' });
    const bareSteady = await waitForDelivery(receiver, 'bare-steady', steadyTotal);
    log(`bare-steady: p50 ${bareSteady.p50Ms} ms, p99 ${bareSteady.p99Ms} ms`);
    await sleep(1_000);
    log(`bare: burst of ${BURST}`);
    const bareBurstStarted = Date.now();
    await ask(bare, { cmd: 'burst' });
    const bareBurst = await waitForDelivery(receiver, 'bare-burst', BURST);
    const bareBurstSeconds = (bareBurst.lastAt - bareBurstStarted) / 1000;
    const { cpuMs: bareCpuMs, inFlight: bareInFlight } = await ask<{ cpuMs: number; inFlight: InFlightStats | null }>(bare, { cmd: 'stop' });

    const relayPerSecond = relayBurst.count / Math.max(relayBurstSeconds, 0.001);
    const barePerSecond = bareBurst.count / Math.max(bareBurstSeconds, 0.001);
    process.stdout.write(
      `${JSON.stringify({
        bench: 'webhooks',
        sink: SINK,
        seconds: SECONDS,
        rate: RATE,
        burstEvents: BURST,
        instances: INSTANCES,
        chatsPerInstance: CHATS,
        lanes: INSTANCES * CHATS,
        relaySettings: settings,
        steady: {
          events: steadyTotal,
          feedSeconds: round(feedSeconds, 2),
          outboxInsertMsPerTick: round(steadyInsertMs, 2),
          relay: {
            delivered: relaySteady.count,
            deliveriesPerSecond: round(relaySteady.count / Math.max((relaySteady.lastAt - steadyStarted) / 1000, 0.001)),
            p50Ms: relaySteady.p50Ms,
            p99Ms: relaySteady.p99Ms,
            coldStartP99Ms: relaySteady.coldStartP99Ms,
            maxMs: relaySteady.maxMs,
            p99MsByHalfSecond: relaySteady.p99MsByHalfSecond,
            duplicates: relaySteady.duplicates,
            outOfOrder: relaySteady.outOfOrder,
          },
          bare: {
            delivered: bareSteady.count,
            p50Ms: bareSteady.p50Ms,
            p99Ms: bareSteady.p99Ms,
            coldStartP99Ms: bareSteady.coldStartP99Ms,
            maxMs: bareSteady.maxMs,
          },
        },
        burst: {
          events: BURST,
          relay: {
            delivered: relayBurst.count,
            fedSeconds: round(burstFedSeconds, 2),
            seconds: round(relayBurstSeconds, 2),
            deliveriesPerSecond: round(relayPerSecond),
            p50Ms: relayBurst.p50Ms,
            p99Ms: relayBurst.p99Ms,
            duplicates: relayBurst.duplicates,
            outOfOrder: relayBurst.outOfOrder,
          },
          bare: {
            delivered: bareBurst.count,
            seconds: round(bareBurstSeconds, 2),
            deliveriesPerSecond: round(barePerSecond),
            p50Ms: bareBurst.p50Ms,
            p99Ms: bareBurst.p99Ms,
          },
          relayVsBare: round(relayPerSecond / Math.max(barePerSecond, 0.001), 3),
          // Requests in flight from the first request to the last answer (mean, share of the time at the limit).
          inFlight: { limit: settings.maxInFlightPerReceiver, relay: relayInFlight, bare: bareInFlight },
        },
        deliveryRows: deliveries,
        cpuMsPerThousandDeliveries: {
          relay: round((relayCpuMs * 1000) / Math.max(deliveredRows, 1), 1),
          bare: round((bareCpuMs * 1000) / Math.max(steadyTotal + BURST, 1), 1),
        },
        relaySql: { statements, perDelivery: round(statements / Math.max(deliveredRows, 1), 3), byKind: queries },
        relayCold: cold,
        relayDbBuffersPerDelivery: await buffersPerDelivery(dataSource, schema, deliveredRows),
        loadAverage: loadavg().map((value) => round(value, 2)),
        goals: { burstVsBare: 0.6, p99MsAtRate: 50 },
        met: {
          burstVsBare: relayPerSecond >= 0.6 * barePerSecond,
          p99: relaySteady.p99Ms !== null && relaySteady.p99Ms <= 50 && relaySteady.count === steadyTotal,
        },
      })}\n`,
    );
  } finally {
    for (const child of children) if (child.connected) child.disconnect();
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill();
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

const roles: Record<Role, () => Promise<void>> = { orchestrate, receiver: runReceiver, relay: runRelay, bare: runBare };
roles[role]().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
