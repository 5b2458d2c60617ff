/**
 * bench/queue: the async send queue over HTTP, as a client sees it.
 *
 *   npm run bench -- queue [--n 100000] [--instances 1000] [--concurrency 64] [--cancel 10000]
 *                          [--drain 3000] [--drain-instances 50] [--pace-instances 5] [--pace-sends 21]
 *                          [--pace-gap 1] [--bare 1]
 *
 * Phases (the defaults are the sizes):
 * 1. baseline: a bare HTTP loop (node:http + one pg INSERT of the request per call, token checked in
 *    a Map) under the same client, the same N and concurrency: what this machine does with no framework;
 * 2. enqueue: N `POST /send/text {async:true}` across `instances` instances to the gateway's HTTP app
 *    (Nest on Fastify, the InstanceGuard's token lookup, validation, the accept path: `Queued` row +
 *    queue row committed before each 200);
 * 3. cancel: one more instance holding `cancel` queued sends, then `DELETE /message/async`: its latency
 *    and its stats;
 * 4. drain: the queue emptied, `drain-instances` instances paired with the simulator in load mode and
 *    adopted by a session worker; `drain` async sends queued with no gap (msg_delay 0), then a
 *    dispatcher started: sends relayed per second until all are out;
 * 5. pacing: `pace-instances` of them with msg_delay_min = msg_delay_max = `pace-gap` s and `pace-sends`
 *    sends each: the gap observed between consecutive sends of one instance minus the configured gap,
 *    (a) as the dispatcher keeps it (worker's answer for send k → hand-over of send k+1; the goal) and
 *    (b) start to start as the network sees it (relayed_at, stamped by the worker), which adds the
 *    whole duration of send k.
 *
 * Processes: the orchestrator (HTTP client, undici keep-alive, and the SQL it needs to check), the
 * simulator, the bare server, and ours (gateway HTTP app + later a session worker and a dispatcher on one
 * in-process bus: the accept path measured alone, as the dispatcher is its own service in production).
 * Prints one JSON object on stdout (progress on stderr).
 * Goals: enqueue ≥ 3,000/s, cancel of 10,000 ≤ 1 s, pacing p99 error ≤ 100 ms.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import pino from 'pino';
import { simControl } from '../support/sim-clients';

type Role = 'orchestrate' | 'sim' | 'bare' | 'ours';

interface SimInfo {
  websocketUrl: string;
  controlUrl: string;
  rootPublicKey: string;
}

interface LoadResult {
  ok: number;
  failed: number;
  firstError?: string;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const num = (name: string, fallback: number) => Number(args.get(name) ?? fallback);
const N = num('n', 100_000);
const INSTANCES = num('instances', 1_000);
const CONCURRENCY = num('concurrency', 64);
const CANCEL = num('cancel', 10_000);
const DRAIN = num('drain', 3_000);
const DRAIN_INSTANCES = num('drain-instances', 50);
const PACE_INSTANCES = num('pace-instances', 5);
const PACE_SENDS = num('pace-sends', 21);
const PACE_GAP_S = num('pace-gap', 1);
const BARE = num('bare', 1);
const PEER = '5511999990000';
/** `--cpu-prof <dir>`: a V8 CPU profile of ours (the gateway, later with worker and dispatcher) written there. */
const CPU_PROF = args.get('cpu-prof');
/** `--only enqueue`: stop after the enqueue phase (profiling the accept path). */
const ONLY = args.get('only');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[queue:${role}] ${line}\n`);
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0);
const send = (message: unknown) => process.send?.(message);

function firstMessage<T>(proc: ChildProcess, accept: (message: unknown) => boolean = () => true): Promise<T> {
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
async function ask<T>(proc: ChildProcess, what: string, extra: Record<string, unknown> = {}): Promise<T> {
  const answer = firstMessage<T & { done: string; error?: string }>(proc, (message) => (message as { done?: string }).done === what);
  proc.send({ do: what, ...extra });
  const result = await answer;
  if (result.error) throw new Error(`${what}: ${result.error}`);
  return result;
}

// --- the HTTP load -------------------------------------------------------------------------------

async function drive(
  baseUrl: string,
  count: number,
  build: (index: number) => { method: 'POST' | 'DELETE'; path: string; token: string; body?: unknown },
): Promise<LoadResult> {
  const { Agent, request } = await import('undici');
  const agent = new Agent({ connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  let failed = 0;
  let firstError: string | undefined;
  let next = 0;
  const started = process.hrtime.bigint();
  try {
    await Promise.all(
      Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
        while (next < count) {
          const call = build(next++);
          const t0 = process.hrtime.bigint();
          try {
            const response = await request(`${baseUrl}${call.path}`, {
              method: call.method,
              dispatcher: agent,
              headers: { 'content-type': 'application/json', token: call.token },
              body: call.body === undefined ? undefined : JSON.stringify(call.body),
            });
            const text = await response.body.text();
            if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
            latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          } catch (error) {
            failed++;
            firstError ??= String((error as Error)?.message ?? error);
          }
        }
      }),
    );
  } finally {
    await agent.close();
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return {
    ok: latencies.length,
    failed,
    ...(firstError ? { firstError } : {}),
    seconds: round(seconds, 2),
    perSecond: Math.round(latencies.length / seconds),
    p50Ms: round(quantile(latencies, 0.5)),
    p99Ms: round(quantile(latencies, 0.99)),
  };
}

const textSend = (index: number) => ({ number: PEER, text: `bench message ${index}`, async: true });

// --- the simulator -------------------------------------------------------------------------------

async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  // Load mode: phones acknowledge without decrypting.
  const sim = await startSimulator({ logLevel: 'silent', phoneDecrypt: false, initialPrekeyCount: 1000, media: false });
  await simControl({ controlUrl: sim.controlUrl }, 'POST', '/sim/accounts', { phone: PEER });
  send({ websocketUrl: sim.websocketUrl, controlUrl: sim.controlUrl, rootPublicKey: sim.rootPublicKey } satisfies SimInfo);
  process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
}

// --- the bare HTTP loop --------------------------------------------------------------------------

async function runBare(databaseUrl: string, schema: string): Promise<void> {
  const pg = await import('pg');
  const Pool = pg.default?.Pool ?? pg.Pool;
  const pool = new Pool({ connectionString: databaseUrl, max: 20, options: `-c search_path=${schema}` });
  await pool.query(
    `CREATE TABLE IF NOT EXISTS bare_sends (id bigserial PRIMARY KEY, instance_id text NOT NULL, request jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
  );
  const tokens = new Map<string, string>(Array.from({ length: INSTANCES }, (_, index) => [`tok-${index}`, `inst-${index}`]));
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      const instance = tokens.get(String(request.headers.token));
      if (!instance) return answer(401, { error: 'Invalid token' });
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
      } catch {
        return answer(400, { error: 'bad json' });
      }
      pool.query(`INSERT INTO bare_sends (instance_id, request) VALUES ($1, $2::jsonb) RETURNING id`, [instance, JSON.stringify(body)]).then(
        (result) => answer(200, { id: String(result.rows[0].id), status: 'Queued' }),
        (error: Error) => answer(500, { error: error.message }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  send({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
  process.once('disconnect', () => {
    server.close();
    void pool.end().finally(() => process.exit(0));
  });
}

// --- ours ----------------------------------------------------------------------------------------

async function runOurs(databaseUrl: string, schema: string, sim: SimInfo): Promise<void> {
  const { ChatRepository, InstanceRepository, openDatabase, SendQueueRepository } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const { AsyncDispatcher, ASYNC_DISPATCHER_DEFAULTS } = await import('@gw/dispatch');
  const { EnvReader, createLogger } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/http-app');
  const { AsyncQueueService } = await import('../../apps/gateway/src/message/async/async-queue.service');
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 24 });
  const bus = new InProcessBus();
  // `--log error`: the stack's logs on stderr (to see why a request failed).
  const logger = args.get('log')
    ? (pino({ level: args.get('log') as string }, pino.destination(2)) as unknown as ReturnType<typeof createLogger>)
    : createLogger('bench', 'silent');
  // The dispatcher's hand-overs to the worker (`instance.<id>.send`): when each began and ended, to
  // measure the gap the dispatcher leaves between the end of one send and the start of the next.
  const handOvers: Array<{ instanceId: string; start: number; end: number }> = [];
  const request = bus.request.bind(bus);
  bus.request = async <T>(subject: string, data: unknown, options: Parameters<typeof request>[2]): Promise<T> => {
    const match = /^instance\.(.+)\.send$/.exec(subject);
    const start = performance.timeOrigin + performance.now();
    try {
      return await request<T>(subject, data, options);
    } finally {
      if (match) handOvers.push({ instanceId: match[1], start, end: performance.timeOrigin + performance.now() });
    }
  };
  // Thousands of sends a second on one token (the cancel step): the limiter still runs, but never refuses.
  const env: Record<string, string> = { DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent', RPC_TIMEOUT_MS: '30000', RATE_LIMIT_INSTANCE: '1000000/s' };
  const config = loadGatewayConfig(new EnvReader(env), []);
  const app = await createHttpApp({ config, dataSource, bus, logger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const accepts = app.get(AsyncQueueService, { strict: false });
  // Counts the SQL statements of the accept path (pg's Client.query sees every statement TypeORM issues).
  const pg = await import('pg');
  const statements = new Map<string, number>();
  const clientPrototype = (pg.default?.Client ?? pg.Client).prototype as unknown as { query: (...call: unknown[]) => unknown };
  const originalQuery = clientPrototype.query;
  clientPrototype.query = function (this: unknown, ...call: unknown[]) {
    const first = call[0] as string | { text?: string };
    const text = (typeof first === 'string' ? first : (first?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 80);
    statements.set(text, (statements.get(text) ?? 0) + 1);
    return originalQuery.apply(this, call);
  };
  let worker: InstanceType<typeof SessionWorker> | undefined;
  let dispatcher: InstanceType<typeof AsyncDispatcher> | undefined;

  process.on('message', (message: { do: string; [key: string]: unknown }) => {
    const done = (result: Record<string, unknown> = {}) => send({ done: message.do, ...result });
    const work = async () => {
      switch (message.do) {
        case 'accept-stats':
          return done({ stats: accepts.acceptStats(), sql: [...statements.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8) });
        case 'hand-overs':
          return done({ handOvers: handOvers.filter((entry) => entry.start >= (message.since as number)) });
        case 'start-worker': {
          worker = new SessionWorker({
            dataSource,
            bus,
            logger,
            config: sessionWorkerConfig({
              workerId: 'bench-worker',
              capacity: DRAIN_INSTANCES,
              simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
            }),
          });
          await worker.start();
          return done();
        }
        case 'start-dispatcher':
          dispatcher = new AsyncDispatcher(
            new SendQueueRepository(dataSource),
            new InstanceRepository(dataSource),
            new ChatRepository(dataSource),
            bus,
            { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'bench', maxLanes: DRAIN_INSTANCES },
            logger,
          );
          dispatcher.start();
          return done();
        case 'stop': {
          await dispatcher?.stop();
          await app.close();
          await worker?.stop();
          await bus.close();
          await dataSource.destroy();
          done();
          return setTimeout(() => process.exit(0), 100);
        }
      }
    };
    work().catch((error: unknown) => done({ error: String((error as Error)?.stack ?? error) }));
  });
  send({ baseUrl: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` });
}

// --- orchestration -------------------------------------------------------------------------------

function child(roleName: Role, extra: string[]): ChildProcess {
  const passed = [...args.entries()].flatMap(([key, value]) => [`--${key}`, value]);
  const profile = CPU_PROF && roleName === 'ours' ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`, '--cpu-prof-name=ours.cpuprofile'] : [];
  return fork(process.argv[1], [roleName, ...passed, ...extra], { execArgv: ['--expose-gc', ...profile], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

async function orchestrate(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const pg = await import('pg');
  const Client = pg.default?.Client ?? pg.Client;
  const db = new Client({ connectionString: databaseUrl, options: `-c search_path=${schema}` });
  await db.connect();
  const count = async (sql: string, params: unknown[] = []) => Number((await db.query(sql, params)).rows[0].n);
  const children: ChildProcess[] = [];
  const result: Record<string, unknown> = { bench: 'queue', node: process.version, n: N, instances: INSTANCES, concurrency: CONCURRENCY };
  try {
    await db.query(`CREATE SCHEMA "${schema}"`);

    // 1. Bare HTTP loop.
    if (BARE) {
      const bare = child('bare', ['--db', databaseUrl, '--schema', schema]);
      children.push(bare);
      const { baseUrl } = await firstMessage<{ baseUrl: string }>(bare);
      log(`bare: ${N} requests`);
      const load = await drive(baseUrl, N, (index) => ({ method: 'POST', path: '/send/text', token: `tok-${index % INSTANCES}`, body: textSend(index) }));
      result.bareHttpInsert = load;
      log(`bare: ${JSON.stringify(load)}`);
      bare.disconnect();
    }

    // 2. Enqueue through the gateway.
    const simProcess = child('sim', []);
    children.push(simProcess);
    const sim = await firstMessage<SimInfo>(simProcess);
    const ours = child('ours', ['--db', databaseUrl, '--schema', schema, '--sim', JSON.stringify(sim)]);
    children.push(ours);
    const { baseUrl } = await firstMessage<{ baseUrl: string }>(ours);
    // The migrations ran in ours: the tables exist now.
    await db.query(
      `INSERT INTO instances (id, token, name, owner) SELECT 'qbench' || n, 'qtok-' || n, 'bench-' || n, '55119888' || lpad(n::text, 5, '0') FROM generate_series(0, $1::int) AS n`,
      [INSTANCES],
    );
    log(`enqueue: ${N} async sends over ${INSTANCES} instances`);
    const enqueue = await drive(baseUrl, N, (index) => ({ method: 'POST', path: '/send/text', token: `qtok-${index % INSTANCES}`, body: textSend(index) }));
    const queued = await count(
      `SELECT count(*) AS n FROM send_queue q JOIN messages m ON m.instance_id = q.instance_id AND m.message_id = q.message_id AND m.status = 'Queued'`,
    );
    const { stats, sql } = await ask<{ stats: { statements: number; items: number }; sql: Array<[string, number]> }>(ours, 'accept-stats');
    log(`enqueue: SQL statements by text: ${JSON.stringify(sql)}`);
    result.enqueue = { ...enqueue, queuedRowsFound: queued, sendsPerStatement: round(stats.items / Math.max(1, stats.statements), 1) };
    log(`enqueue: ${JSON.stringify(result.enqueue)}`);
    if (ONLY === 'enqueue') {
      await ask(ours, 'stop').catch(() => undefined);
      await new Promise((resolve) => ours.once('exit', resolve));
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }

    // 3. Cancel: instance INSTANCES (the spare one) holding CANCEL queued sends.
    log(`cancel: queue ${CANCEL} on one instance`);
    const fill = await drive(baseUrl, CANCEL, (index) => ({ method: 'POST', path: '/send/text', token: `qtok-${INSTANCES}`, body: textSend(index) }));
    const holding = await count(`SELECT count(*) AS n FROM send_queue WHERE instance_id = $1`, [`qbench${INSTANCES}`]);
    const { request } = await import('undici');
    const t0 = process.hrtime.bigint();
    const response = await request(`${baseUrl}/message/async`, { method: 'DELETE', headers: { token: `qtok-${INSTANCES}` } });
    const answer = (await response.body.json()) as { stats?: Record<string, number> };
    const cancelMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const canceledRows = await count(`SELECT count(*) AS n FROM messages WHERE instance_id = $1 AND status = 'Canceled'`, [`qbench${INSTANCES}`]);
    result.cancel = { queued: holding, fillFailed: fill.failed, status: response.statusCode, ms: round(cancelMs), stats: answer.stats, canceledRows };
    log(`cancel: ${JSON.stringify(result.cancel)}`);

    // 4. Drain: a clean queue, DRAIN_INSTANCES paired instances, a worker, then a dispatcher.
    await db.query(`TRUNCATE send_queue`);
    log(`drain: pairing ${DRAIN_INSTANCES} instances with the simulator`);
    for (let index = 0; index < DRAIN_INSTANCES; index++) {
      const phone = `5533${String(index).padStart(8, '0')}`;
      await simControl(sim, 'POST', '/sim/accounts', { phone });
      const { creds } = await simControl<{ creds: unknown }>(sim, 'POST', `/sim/accounts/${phone}/provision`, {});
      const id = `dbench${index}`;
      await db.query(`INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $1, 'connected', true, $3)`, [
        id,
        `dtok-${index}`,
        phone,
      ]);
      await db.query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [id, JSON.stringify(creds)]);
    }
    await ask(ours, 'start-worker');
    const deadline = Date.now() + 300_000;
    while ((await count(`SELECT count(*) AS n FROM instances WHERE id LIKE 'dbench%' AND status = 'connected'`)) < DRAIN_INSTANCES && Date.now() < deadline)
      await sleep(250);
    const connected = await count(`SELECT count(*) AS n FROM instances WHERE id LIKE 'dbench%' AND status = 'connected'`);
    log(`drain: ${connected}/${DRAIN_INSTANCES} connected; warm-up send per instance`);
    // Warm-up (not counted): the first send of each instance sets up its Signal session with the peer.
    await ask(ours, 'start-dispatcher');
    const warm = await drive(baseUrl, DRAIN_INSTANCES, (index) => ({ method: 'POST', path: '/send/text', token: `dtok-${index}`, body: textSend(index) }));
    const out = `SELECT count(*) AS n FROM messages WHERE instance_id LIKE 'dbench%' AND (relayed_at IS NOT NULL OR status = 'Failed')`;
    while ((await count(out)) < warm.ok && Date.now() < deadline) await sleep(100);
    // Timed from the first accept to the last send out (accepting is far faster than sending).
    const before = await count(out);
    log(`drain: ${DRAIN} sends over ${connected} instances, msg_delay 0`);
    const drainStarted = Date.now();
    const drainLoad = await drive(baseUrl, DRAIN, (index) => ({
      method: 'POST',
      path: '/send/text',
      token: `dtok-${index % DRAIN_INSTANCES}`,
      body: textSend(index),
    }));
    while ((await count(out)) < before + drainLoad.ok && Date.now() < deadline + 300_000) await sleep(100);
    const drainSeconds = (Date.now() - drainStarted) / 1000;
    const failedSends = await count(`SELECT count(*) AS n FROM messages WHERE instance_id LIKE 'dbench%' AND status = 'Failed'`);
    result.drain = {
      instances: connected,
      sends: drainLoad.ok,
      acceptSeconds: drainLoad.seconds,
      seconds: round(drainSeconds, 2),
      perSecond: Math.round(drainLoad.ok / drainSeconds),
      failed: failedSends,
    };
    log(`drain: ${JSON.stringify(result.drain)}`);

    // 5. Pacing: PACE_INSTANCES instances, a fixed gap, PACE_SENDS sends each.
    const paced = Array.from({ length: Math.min(PACE_INSTANCES, connected) }, (_, index) => index);
    await db.query(`UPDATE instances SET msg_delay_min = $2, msg_delay_max = $2 WHERE id = ANY($1::text[])`, [
      paced.map((index) => `dbench${index}`),
      PACE_GAP_S,
    ]);
    log(`pacing: ${paced.length} instances × ${PACE_SENDS} sends, gap ${PACE_GAP_S} s`);
    const pacedSince = new Date();
    const pacing = await drive(baseUrl, paced.length * PACE_SENDS, (index) => ({
      method: 'POST',
      path: '/send/text',
      token: `dtok-${paced[index % paced.length]}`,
      body: textSend(index),
    }));
    const pacedOut = `SELECT count(*) AS n FROM messages WHERE instance_id = ANY($1::text[]) AND created_at >= $2 AND (relayed_at IS NOT NULL OR status = 'Failed')`;
    const paceDeadline = Date.now() + (PACE_SENDS * PACE_GAP_S + 120) * 1000;
    while ((await count(pacedOut, [paced.map((index) => `dbench${index}`), pacedSince])) < pacing.ok && Date.now() < paceDeadline) await sleep(200);
    const rows = (
      await db.query(
        `SELECT instance_id, extract(epoch FROM relayed_at) * 1000 AS at FROM messages WHERE instance_id = ANY($1::text[]) AND created_at >= $2 AND relayed_at IS NOT NULL ORDER BY instance_id, relayed_at`,
        [paced.map((index) => `dbench${index}`), pacedSince],
      )
    ).rows as Array<{ instance_id: string; at: string }>;
    // (a) The dispatcher's gap: end of the worker's answer for send k → hand-over of send k+1 (what
    // msg_delay configures: the wait between sends). (b) Start to start as the network sees it
    // (relayed_at, stamped by the worker): the gap plus the whole send of k (encrypt, server ack, SQL).
    const { handOvers } = await ask<{ handOvers: Array<{ instanceId: string; start: number; end: number }> }>(ours, 'hand-overs', {
      since: pacedSince.getTime(),
    });
    const gapMs = PACE_GAP_S * 1000;
    const gapStats = (values: number[]) => {
      const sorted = values.map((value) => Math.abs(value - gapMs)).sort((a, b) => a - b);
      return {
        gaps: sorted.length,
        shorterThanConfigured: values.filter((value) => value < gapMs).length,
        p50ErrorMs: round(quantile(sorted, 0.5)),
        p99ErrorMs: round(quantile(sorted, 0.99)),
        maxErrorMs: round(sorted[sorted.length - 1] ?? 0),
      };
    };
    const waits: number[] = [];
    for (const index of paced) {
      const mine = handOvers.filter((entry) => entry.instanceId === `dbench${index}`).sort((a, b) => a.start - b.start);
      for (let i = 1; i < mine.length; i++) waits.push(mine[i].start - mine[i - 1].end);
    }
    const startToStart: number[] = [];
    for (let i = 1; i < rows.length; i++) if (rows[i].instance_id === rows[i - 1].instance_id) startToStart.push(Number(rows[i].at) - Number(rows[i - 1].at));
    result.pacing = { instances: paced.length, gapMs, dispatcherGap: gapStats(waits), relayedStartToStart: gapStats(startToStart) };
    log(`pacing: ${JSON.stringify(result.pacing)}`);

    await ask(ours, 'stop').catch(() => undefined);
    const enqueueResult = result.enqueue as LoadResult;
    const cancelResult = result.cancel as { ms: number; status: number; canceledRows: number };
    const pacingResult = (result.pacing as { dispatcherGap: { p99ErrorMs: number; gaps: number } }).dispatcherGap;
    result.goals = {
      enqueuePerSecond: { goal: 3_000, measured: enqueueResult.perSecond, met: enqueueResult.perSecond >= 3_000 && enqueueResult.failed === 0 },
      cancelMs: {
        goal: 1_000,
        measured: cancelResult.ms,
        met: cancelResult.ms <= 1_000 && cancelResult.status === 200 && cancelResult.canceledRows === CANCEL,
      },
      pacingP99ErrorMs: { goal: 100, measured: pacingResult.p99ErrorMs, met: pacingResult.gaps > 0 && pacingResult.p99ErrorMs <= 100 },
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    for (const proc of children) if (proc.connected) proc.disconnect();
    await sleep(500);
    for (const proc of children) proc.kill();
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await db.end();
  }
}

async function main(): Promise<void> {
  if (role === 'sim') return runSim();
  if (role === 'bare') return runBare(args.get('db') as string, args.get('schema') as string);
  if (role === 'ours') return runOurs(args.get('db') as string, args.get('schema') as string, JSON.parse(args.get('sim') as string) as SimInfo);
  await orchestrate();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
