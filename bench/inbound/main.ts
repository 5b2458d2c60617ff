/**
 * bench/inbound (issue #38): a busy account. Phones send to an instance as fast as the simulator lets
 * them (texts, images, group messages, reactions), next to a BARE Baileys receiver (in-memory auth,
 * decrypts and counts only) in the same run, on the same simulator. The sides run one after the other.
 *
 *   npm run bench -- inbound [--instances 1,50] [--messages 4000] [--many-messages 400] [--phones 20] [--pool 20] [--db-rtt-ms 0] [--repeat 1]
 *
 * `--db-rtt-ms N`: ours' worker reaches Postgres through a proxy N ms of round trip further away (a Postgres on
 * another machine, as deployed: bench/support/db-latency); the JSON carries `dbRttMs` and `dbRoundTripMs`.
 *
 * How a side is flooded: its devices are paired and offline; the phones send each device its messages
 * (`--messages` per instance when one instance, `--many-messages` each when several; at most 4,500: the
 * simulator keeps 5,000 stanzas per offline device), which the server keeps; then the side connects and
 * the server hands them over as fast as it can write them, as WhatsApp does after a reconnect: the
 * receiver, not the phones' encryption, is what is measured. The mix, per ten: five texts, three group
 * messages (one group per instance, every phone in it), one image (1 KB, on the simulator's media server,
 * not downloaded by either side), one reaction to the previous text. Receipts are not in the mix (the
 * phones' receipts need messages the instance sent; bench/send measures those).
 *
 * Ours is the session worker as apps/session-worker runs it, in a process of its own, over NATS (under a
 * prefix of the run's own) and Postgres (a schema of the run's own). A message counts when it is stored
 * and its outbox event written (one transaction): `messages` events plus the `messages_update` ones
 * (a reaction updates the message it reacts to). Bare counts `messages.upsert` items. The rate of each
 * side: messages over the time from its first message to its last (outbox `created_at` for ours).
 * Ours also prints the worker's peak RSS, and its inbound backlog sampled every 50 ms from its own
 * metrics (`wa_gateway_inbound_queue_depth`, `_paused_connections`, `_pauses_total`): bounded when the
 * deepest it got is within its bounds (INBOUND_QUEUE_MAX per socket, INBOUND_WORKER_QUEUE_MAX) plus,
 * per socket, what a light socket still takes while the worker is full (a quarter of its own bound) and
 * what one read brings (InboundBackpressure).
 *
 * Prints one JSON object on stdout (progress on stderr), ending with `goal` and `met`.
 * Goal: one instance ≥ 500 messages/s and ≥ 0.5 × bare, every message stored, the backlog bounded.
 * `--repeat K` runs the whole bench K times, each in a process of its own, and judges the goal on the
 * medians (one run's ratio moves with the machine by more than the goal's margin).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { serverCpuBetween, serverCpuMark } from '../support/postgres';
import {
  allocationSampler,
  answerQuestions,
  ask,
  loadBetween,
  loadMark,
  type LoadMark,
  serveWorkerChild,
  stopChild,
  UNCOUNTED,
  type WorkerSetup,
} from '../support/processes';
import { bareReceive, type BacklogSample, type Devices, insertInstances, peakRssMb, sampleInboundBacklog, type SimInfo } from '../support/receivers';
import { provisionDevices, simControl } from '../support/sim-clients';
import { DB_PROXY_ROLE, dbRttMs, medianRoundTripMs, serveDbProxyChild, startDbProxyChild } from '../support/db-latency';
import { finite, runTimes, spread } from '../support/repeat';

type Role = 'orchestrate' | 'sim' | 'bare' | 'worker' | typeof DB_PROXY_ROLE;

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const SIZES = (args.get('instances') ?? '1,50').split(',').map(Number);
const MESSAGES = Number(args.get('messages') ?? 4000);
const MANY_MESSAGES = Number(args.get('many-messages') ?? 400);
const PHONES = Number(args.get('phones') ?? 20);
const POOL = Number(args.get('pool') ?? 20);
const REPEAT = Math.max(1, Math.floor(Number(args.get('repeat') ?? 1)) || 1);
/** `--db-rtt-ms N`: ours' worker reaches Postgres N ms of round trip further away (bench/support/db-latency). */
const DB_RTT_MS = role === 'orchestrate' ? dbRttMs(args) : 0;
/** The simulator keeps 5,000 stanzas per offline device; the rest of its queue is the app-state key share and such. */
const PER_DEVICE_MAX = 4500;
/** The worker's inbound bounds (INBOUND_QUEUE_MAX, INBOUND_WORKER_QUEUE_MAX: the defaults unless set). */
const SOCKET_MAX = Number(process.env.INBOUND_QUEUE_MAX ?? 1000);
const WORKER_MAX = Number(process.env.INBOUND_WORKER_QUEUE_MAX ?? 20000);
const PHONE_PREFIX = '5539';
if (
  SIZES.some((n) => !Number.isInteger(n) || n < 1) ||
  !(MESSAGES >= 10 && MESSAGES <= PER_DEVICE_MAX) ||
  !(MANY_MESSAGES >= 10 && MANY_MESSAGES <= PER_DEVICE_MAX)
) {
  process.stderr.write(`--instances is a list of whole numbers ≥ 1; --messages and --many-messages are 10–${PER_DEVICE_MAX}\n`);
  process.exit(2);
}

/** Node/V8 flags of one child process, for diagnostics (`--cpu-prof --cpu-prof-dir=…`): INBOUND_WORKER_NODE_FLAGS, INBOUND_SIM_NODE_FLAGS. */
const nodeFlags = (variable: string): string[] => (process.env[variable] ?? '').split(' ').filter(Boolean);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[inbound:${role}] ${line}\n`);
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const phone = (index: number) => `${PHONE_PREFIX}${String(index).padStart(6, '0')}`;

/** One device to flood: its phone number and its group's JID. */
interface Target {
  phone: string;
  group: string;
}

/** What the phones sent, by kind, and how long the simulator took to take it. */
interface Flooded {
  sent: number;
  byKind: Record<string, number>;
  seconds: number;
}

// --- the simulator process ------------------------------------------------------------------------

/** The i-th message of a target's mix (of ten: five texts, three group messages, one image, one reaction). */
const KINDS = ['text', 'group', 'text', 'image', 'text', 'group', 'reaction', 'text', 'group', 'text'] as const;

async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const running = await startSimulator({ logLevel: 'silent', phoneDecrypt: false, initialPrekeyCount: 1000 });
  const sim = running.sim;
  const image = randomBytes(1024).toString('base64');
  answerQuestions({
    /** Every target gets `count` messages from the phones, in the mix; the phones take turns. */
    flood: async (message) => {
      const { targets, count } = message as unknown as { targets: Target[]; count: number };
      const byKind: Record<string, number> = {};
      const started = Date.now();
      await Promise.all(
        targets.map(async (target) => {
          let lastText: { id: string; from: string } | undefined;
          for (let i = 0; i < count; i++) {
            const kind = i === 0 ? 'text' : KINDS[i % KINDS.length];
            const from = phone(i % PHONES);
            if (kind === 'text') {
              const { id } = await sim.sendMessage(from, target.phone, { text: `inbound bench ${i}` });
              lastText = { id, from };
            } else if (kind === 'group') {
              await sim.sendMessage(from, target.group, { text: `inbound bench group ${i}` });
            } else if (kind === 'image') {
              await sim.sendMedia(from, { to: target.phone, type: 'image', data: image, caption: `inbound bench image ${i}` });
            } else if (lastText) {
              const reacted = { remoteJid: `${target.phone}@s.whatsapp.net`, fromMe: true, id: lastText.id };
              await sim.sendMessage(lastText.from, target.phone, {
                message: { reactionMessage: { key: reacted, text: '👍', senderTimestampMs: Date.now() } },
              });
            }
            byKind[kind] = (byKind[kind] ?? 0) + 1;
          }
        }),
      );
      await sim.settle();
      return { sent: targets.length * count, byKind, seconds: round((Date.now() - started) / 1000, 2) } satisfies Flooded;
    },
  });
  process.send?.({ websocketUrl: running.websocketUrl, controlUrl: running.controlUrl, rootPublicKey: running.rootPublicKey } satisfies SimInfo);
  process.on('disconnect', () => void running.stop().finally(() => process.exit(0)));
}

/** Devices for one side, each with a group of every phone, flooded while offline. */
async function prepareSide(
  sim: SimInfo,
  simProcess: ChildProcess,
  size: number,
  count: number,
  prefix: string,
): Promise<{ devices: Devices; flooded: Flooded }> {
  const devices = await provisionDevices(sim, size, prefix);
  const targets: Target[] = [];
  for (const device of devices) {
    const info = await simControl<{ id?: string; jid?: string }>(sim, 'POST', '/sim/groups', {
      creator: phone(0),
      subject: `inbound ${device.phone}`,
      participants: [...Array.from({ length: PHONES - 1 }, (_, i) => phone(i + 1)), device.phone],
    });
    targets.push({ phone: device.phone, group: String(info.jid ?? info.id) });
  }
  const flooded = await ask<Flooded>(simProcess, 'flood', { targets, count }, 900_000);
  log(`${flooded.sent} messages queued for ${size} offline device(s) in ${flooded.seconds} s ${JSON.stringify(flooded.byKind)}`);
  return { devices, flooded };
}

// --- bare Baileys ----------------------------------------------------------------------------------

interface Side {
  instances: number;
  sent: number;
  received: number;
  perSecond: number;
  seconds: number;
  peakRssMb: number;
  cpuMsPerMessage: number;
  /** KB allocated on the JS heap per message, over the same window as the CPU (loadBetween). */
  allocatedKbPerMessage: number;
}

async function runBareChild(): Promise<void> {
  process.once('message', (setup: { sim: SimInfo; devices: Devices; expected: number }) => {
    void (async () => {
      const counted = await bareReceive(setup.sim, setup.devices, setup.expected, 20_000, (event, data) =>
        event === 'messages.upsert' ? ((data as { messages?: unknown[] }).messages?.length ?? 0) : 0,
      );
      process.send?.(counted);
      process.once('disconnect', () => process.exit(0));
    })();
  });
}

async function runBare(sim: SimInfo, simProcess: ChildProcess, size: number, count: number): Promise<Side> {
  const { devices, flooded } = await prepareSide(sim, simProcess, size, count, `55${31 + SIZES.indexOf(size) * 2}`);
  const child = fork(process.argv[1], ['bare'], {
    execArgv: ['--expose-gc', ...process.execArgv.filter((flag) => flag.startsWith('--cpu-prof'))],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const answer = new Promise<Awaited<ReturnType<typeof bareReceive>>>((resolve, reject) => {
    child.once('message', (message) => resolve(message as Awaited<ReturnType<typeof bareReceive>>));
    child.once('exit', (code) => reject(new Error(`bare exited with ${code}`)));
  });
  child.send({ sim, devices, expected: flooded.sent });
  const counted = await answer;
  await stopChild(child);
  const seconds = Math.max(0.001, (counted.lastAt - counted.firstAt) / 1000);
  return {
    instances: size,
    sent: flooded.sent,
    received: counted.count,
    perSecond: round(counted.count / seconds),
    seconds: round(seconds, 2),
    peakRssMb: counted.peakRssMb,
    cpuMsPerMessage: round(counted.cpuMs / Math.max(1, counted.count), 2),
    allocatedKbPerMessage: round((counted.allocatedMb * 1000) / Math.max(1, counted.count), 1),
  };
}

// --- ours: the session worker in a process of its own -----------------------------------------------

interface OursSide extends Side {
  postgresCpuMsPerMessage: number | null;
  /** Stored with its event, by event type. */
  events: Record<string, number>;
  messageRows: number;
  backlog: BacklogSample & { bounded: boolean; socketMax: number; workerMax: number };
  connectSeconds: number;
}

function runWorkerChild(): void {
  let sampler: Awaited<ReturnType<typeof sampleInboundBacklog>> | undefined;
  let from: LoadMark | undefined;
  // INBOUND_WORKER_ALLOCATIONS=<file>: what the worker allocated over the flood, by stack (diagnostics).
  const allocations = process.env.INBOUND_WORKER_ALLOCATIONS ? allocationSampler() : undefined;
  serveWorkerChild({
    natsName: 'bench-inbound-worker',
    poolSize: POOL,
    logger: pino({ level: process.env.BENCH_LOG_LEVEL ?? 'silent' }, pino.destination(2)),
    worker: { workerId: 'bench-inbound-worker', capacity: Math.max(...SIZES) },
    measure: async () => {
      sampler = await sampleInboundBacklog();
      await allocations?.start();
      from = loadMark();
      return {};
    },
    measured: async () => {
      const used = loadBetween(from ?? loadMark(), loadMark());
      await allocations?.stop(process.env.INBOUND_WORKER_ALLOCATIONS as string);
      return { backlog: await sampler?.stop(), peakRssMb: peakRssMb(), cpuMs: Math.round(used.cpuMs), allocatedMb: used.allocatedMb };
    },
  });
}

async function runOurs(sim: SimInfo, simProcess: ChildProcess, size: number, count: number, databaseUrl: string, workerDatabaseUrl: string): Promise<OursSide> {
  const { openDatabase } = await import('@gw/persistence');
  const schema = `bench_inbound_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 4 });
  let worker: ChildProcess | undefined;
  try {
    const { devices, flooded } = await prepareSide(sim, simProcess, size, count, `55${32 + SIZES.indexOf(size) * 2}`);
    await insertInstances(dataSource, devices, 'rinbound');
    worker = fork(process.argv[1], ['worker', '--instances', String(Math.max(...SIZES)), '--pool', String(POOL)], {
      execArgv: ['--expose-gc', ...process.execArgv.filter((flag) => flag.startsWith('--cpu-prof')), ...nodeFlags('INBOUND_WORKER_NODE_FLAGS')],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const started = Date.now();
    await ask(worker, 'start', { setup: { databaseUrl: workerDatabaseUrl, schema, prefix: `${schema}.`, sim } satisfies WorkerSetup }, 60_000);
    await ask(worker, 'measure');
    const serverMark = await serverCpuMark(dataSource);
    // Stored and evented: the `messages` events, and the `messages_update` ones (reactions).
    const types = ['messages', 'messages_update'];
    let connectSeconds = 0;
    let stored = 0;
    let lastChange = Date.now();
    // Nothing new for 20 s once connected ends the wait (connecting many on a loaded machine takes longer: up to 300 s).
    while (Date.now() - lastChange < 20_000 || (!connectSeconds && Date.now() - started < 300_000)) {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`${UNCOUNTED} SELECT count(*)::int AS n FROM outbox_events WHERE event_type = ANY($1)`, [
        types,
      ]);
      if (!connectSeconds) {
        const [{ c }]: Array<{ c: number }> = await dataSource.query(`${UNCOUNTED} SELECT count(*)::int AS c FROM instances WHERE status = 'connected'`);
        if (c >= size) connectSeconds = round((Date.now() - started) / 1000, 2);
      }
      if (n !== stored) lastChange = Date.now();
      stored = n;
      if (stored >= flooded.sent) break;
      await sleep(100);
    }
    const serverCpuMs = serverCpuBetween(serverMark, await serverCpuMark(dataSource));
    const measured = await ask<{ backlog: BacklogSample; peakRssMb: number; cpuMs: number; allocatedMb: number }>(worker, 'measured');
    const byType: Array<{ event_type: string; n: number; first: string; last: string }> = await dataSource.query(
      `${UNCOUNTED} SELECT event_type, count(*)::int AS n, min(created_at)::text AS first, max(created_at)::text AS last FROM outbox_events WHERE event_type = ANY($1) GROUP BY event_type`,
      [types],
    );
    const [{ rows }]: Array<{ rows: number }> = await dataSource.query(`${UNCOUNTED} SELECT count(*)::int AS rows FROM messages`);
    const received = byType.reduce((sum, row) => sum + row.n, 0);
    const first = Math.min(...byType.map((row) => Date.parse(row.first)));
    const last = Math.max(...byType.map((row) => Date.parse(row.last)));
    const seconds = Math.max(0.001, (last - first) / 1000);
    const bound = Math.min(WORKER_MAX, size * SOCKET_MAX);
    return {
      instances: size,
      sent: flooded.sent,
      received,
      perSecond: received ? round(received / seconds) : 0,
      seconds: round(seconds, 2),
      peakRssMb: measured.peakRssMb,
      cpuMsPerMessage: round(measured.cpuMs / Math.max(1, received), 2),
      allocatedKbPerMessage: round((measured.allocatedMb * 1000) / Math.max(1, received), 1),
      // Postgres' share (its client backends of this database, the bench's own polling included); null when it runs elsewhere.
      postgresCpuMsPerMessage: serverCpuMs === undefined ? null : round(serverCpuMs / Math.max(1, received), 2),
      events: Object.fromEntries(byType.map((row) => [row.event_type, row.n])),
      messageRows: rows,
      // The bound InboundBackpressure documents: the worker's (or the sockets' own), plus for each socket what
      // it may still take while the worker is full (a light socket is read until it holds a quarter of its
      // own bound) and what one read brought after its pause (ADR 0013): a read's worth, taken as 200.
      backlog: {
        ...measured.backlog,
        socketMax: SOCKET_MAX,
        workerMax: WORKER_MAX,
        bounded: measured.backlog.depthMax <= bound + size * (SOCKET_MAX / 4 + 200),
      },
      connectSeconds,
    };
  } finally {
    if (worker) await stopChild(worker).catch(() => undefined);
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

// --- orchestration --------------------------------------------------------------------------------

async function orchestrate(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const simProcess = fork(process.argv[1], ['sim', '--phones', String(PHONES)], {
    execArgv: nodeFlags('INBOUND_SIM_NODE_FLAGS'),
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const sim = await new Promise<SimInfo>((resolve, reject) => {
    simProcess.once('message', (message) => resolve(message as SimInfo));
    simProcess.once('exit', (code) => reject(new Error(`the simulator exited with ${code}`)));
  });
  const proxy = DB_RTT_MS > 0 ? await startDbProxyChild(databaseUrl, DB_RTT_MS) : null;
  const workerDatabaseUrl = proxy?.url ?? databaseUrl;
  try {
    const dbRoundTripMs = proxy ? { direct: await medianRoundTripMs(databaseUrl), proxied: await medianRoundTripMs(workerDatabaseUrl) } : null;
    for (let i = 0; i < PHONES; i++) await simControl(sim, 'POST', '/sim/accounts', { phone: phone(i) });
    const runs: Array<{ instances: number; messagesPerInstance: number; bare: Side; ours: OursSide; ratio: number }> = [];
    for (const size of SIZES) {
      const count = size === 1 ? MESSAGES : MANY_MESSAGES;
      log(`${size} instance(s), ${count} messages each: bare`);
      const bare = await runBare(sim, simProcess, size, count);
      log(`bare: ${JSON.stringify(bare)}`);
      log(`${size} instance(s): ours`);
      const ours = await runOurs(sim, simProcess, size, count, databaseUrl, workerDatabaseUrl);
      log(`ours: ${JSON.stringify(ours)}`);
      runs.push({ instances: size, messagesPerInstance: count, bare, ours, ratio: round(ours.perSecond / Math.max(0.001, bare.perSecond), 2) });
    }
    const one = runs.find((run) => run.instances === 1) ?? runs[0];
    const complete = runs.every((run) => run.ours.received >= run.ours.sent && run.bare.received >= run.bare.sent);
    const bounded = runs.every((run) => run.ours.backlog.bounded);
    process.stdout.write(
      `${JSON.stringify({
        bench: 'inbound',
        node: process.version,
        phones: PHONES,
        dbRttMs: DB_RTT_MS,
        dbRoundTripMs,
        runs,
        one: {
          oursPerSecond: one.ours.perSecond,
          barePerSecond: one.bare.perSecond,
          ratio: one.ratio,
          workerPeakRssMb: one.ours.peakRssMb,
          // JS heap allocated per message, each side's process (ours' connect included, as its CPU): steadier than the rates.
          allocatedKbPerMessage: { ours: one.ours.allocatedKbPerMessage, bare: one.bare.allocatedKbPerMessage },
        },
        many:
          runs.length > 1
            ? { instances: runs[runs.length - 1].instances, oursPerSecond: runs[runs.length - 1].ours.perSecond, ratio: runs[runs.length - 1].ratio }
            : null,
        complete,
        bounded,
        goal: 'one instance: ours >= 500 messages/s and >= 0.5 x bare; every message stored with its event; inbound backlog bounded',
        met: one.ours.perSecond >= 500 && one.ratio >= 0.5 && complete && bounded,
      })}\n`,
    );
  } finally {
    simProcess.disconnect();
    proxy?.stop();
  }
}

/** What one run printed that `--repeat` reads. */
interface RunSummary {
  one: { oursPerSecond: number; barePerSecond: number; ratio: number };
  many: { instances: number; oursPerSecond: number; ratio: number } | null;
  complete: boolean;
  bounded: boolean;
}

/**
 * `--repeat K`: the whole bench K times, each run in a process of its own (bare and ours side by side in each),
 * each run's key figures and their medians; the goal is judged on the medians, as the machine moves one run's
 * ratio by more than the goal's margin (docs/bench/inbound.md).
 */
async function repeated(times: number): Promise<void> {
  const runs = await runTimes<RunSummary>(times, log);
  const ones = runs.map((run) => run.one);
  const oursPerSecond = spread(ones.map((one) => one.oursPerSecond));
  const ratio = spread(ones.map((one) => one.ratio));
  const manyRatio = spread(finite(runs.map((run) => run.many?.ratio)));
  const everyRun = runs.every((run) => run.complete && run.bounded);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'inbound',
      repeat: times,
      runs: runs.map((run) => ({ one: run.one, many: run.many, complete: run.complete, bounded: run.bounded })),
      one: { oursPerSecond, barePerSecond: spread(ones.map((one) => one.barePerSecond)), ratio },
      many: manyRatio.median === null ? null : { ratio: manyRatio },
      complete: everyRun,
      goal: 'the medians over the runs: one instance ours >= 500 messages/s and >= 0.5 x bare; every message stored with its event and the backlog bounded in every run',
      met: (oursPerSecond.median ?? 0) >= 500 && (ratio.median ?? 0) >= 0.5 && everyRun,
    })}\n`,
  );
}

async function main(): Promise<void> {
  if (role === 'sim') return runSim();
  if (role === 'bare') return runBareChild();
  if (role === 'worker') return runWorkerChild();
  if (role === DB_PROXY_ROLE) return serveDbProxyChild(args);
  if (REPEAT > 1) await repeated(REPEAT);
  else await orchestrate();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
