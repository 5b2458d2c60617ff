/**
 * bench/history (issue #38): a fresh pairing receives a history of `--messages` messages in `--chats`
 * chats, next to BARE Baileys (in-memory auth) receiving the same history from the same simulator, in
 * the same run; the sides run one after the other. Meanwhile `--senders` other instances on the same
 * worker (bare: other sockets of the same process) keep sending texts, `--send-rate` a second in all,
 * each awaited until the server's ack: their latency shows what the history costs the worker's others.
 *
 *   npm run bench -- history [--messages 100000] [--chats 1000] [--chunk 1000] [--senders 5] [--send-rate 10] [--pool 20]
 *
 * The history: what the phone pushes to a device at its first login after pairing (the simulator's
 * initial sync), as HistorySync protobufs, zlib-compressed, in chunks of `--chunk` messages (whole
 * chats each; the first INITIAL_BOOTSTRAP with the push names, the rest RECENT, `progress` rising to
 * 100, with each chat's number-to-LID mapping), each in its own peer message. The simulator sends them inline (`initialHistBootstrapInlinePayload`)
 * where WhatsApp sends the bigger ones through the media path (an encrypted download): both sides are
 * spared that download alike. Messages alternate between received and sent, texts of 20–60 characters.
 *
 * Ours is the session worker as apps/session-worker runs it, in a process of its own over NATS (a prefix
 * of the run's own) and Postgres (a schema of the run's own), with the gateway's HTTP app in this process
 * taking the senders' `POST /send/text`. Ours' time: from the instance's connection (its status
 * `connected`, polled every 100 ms) to the last `history` event written, once every message is stored
 * (`messages` rows) and counted in a `history` event. Bare's: from its socket's `open` to the last
 * `messaging-history.set` that brought the total. Also printed: the worker's peak RSS and the senders'
 * p50/p99 on each side during the history.
 *
 * Prints one JSON object on stdout (progress on stderr), ending with `goal` and `met`.
 * Goal: ours ≤ 60 s and ≤ 1.5 × bare, worker peak RSS ≤ 1 GB (1,024 MB), every message stored.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { answerQuestions, ask, PrefixedBus, serveWorkerChild, stopChild, UNCOUNTED, windowProfiler, type WorkerSetup } from '../support/processes';
import { storageFloor, timeStatements } from './floor';
import { bareReceive, type Devices, insertInstances, peakRssMb, type SimInfo } from '../support/receivers';
import { provisionDevices, serverAcks, simControl } from '../support/sim-clients';

type Role = 'orchestrate' | 'sim' | 'bare' | 'worker';

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const MESSAGES = Number(args.get('messages') ?? 100_000);
const CHATS = Number(args.get('chats') ?? 1000);
const CHUNK = Number(args.get('chunk') ?? 1000);
const SENDERS = Number(args.get('senders') ?? 5);
const SEND_RATE = Number(args.get('send-rate') ?? 10);
const POOL = Number(args.get('pool') ?? 20);
/** A V8 CPU profile of the worker over the measured window, written to this file (`--profile /tmp/w.cpuprofile`). */
const PROFILE = args.get('profile');
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const PEER = '5539000000';
if (!(CHATS >= 1 && MESSAGES >= CHATS && CHUNK >= 1 && SENDERS >= 0 && SEND_RATE > 0)) {
  process.stderr.write('--messages ≥ --chats ≥ 1, --chunk ≥ 1, --senders ≥ 0, --send-rate > 0\n');
  process.exit(2);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[history:${role}] ${line}\n`);
const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

// --- the simulator process ------------------------------------------------------------------------

/**
 * The history as HistorySync JSON objects: `chats` chats (1:1, with made-up numbers) sharing `messages`
 * messages, in chunks of whole chats of about `chunk` messages.
 */
function generateHistory(messages: number, chats: number, chunk: number, own: { jid: string; name: string }): Array<Record<string, unknown>> {
  const now = Math.floor(Date.now() / 1000);
  const conversations: Array<{
    id: string;
    lid: string;
    messages: Array<{ message: Record<string, unknown> }>;
    conversationTimestamp: number;
    unreadCount: number;
  }> = [];
  let made = 0;
  for (let c = 0; c < chats; c++) {
    const count = Math.floor(messages / chats) + (c < messages % chats ? 1 : 0);
    const id = `55398${String(c).padStart(7, '0')}@s.whatsapp.net`;
    const list: Array<{ message: Record<string, unknown> }> = [];
    for (let m = 0; m < count; m++) {
      const at = now - 86_400 + made;
      list.push({
        message: {
          key: { remoteJid: id, fromMe: m % 2 === 1, id: `3EB0H${String(made).padStart(12, '0')}` },
          message: { conversation: `history message ${made} ${'x'.repeat(20 + (made % 40))}` },
          messageTimestamp: at,
          status: m % 2 === 1 ? 4 : undefined,
        },
      });
      made++;
    }
    conversations.push({ id, lid: `19398${String(c).padStart(7, '0')}@lid`, messages: list, conversationTimestamp: now - 86_400 + made, unreadCount: 0 });
  }
  const chunks: Array<Record<string, unknown>> = [];
  let current: typeof conversations = [];
  let size = 0;
  const flush = () => {
    if (!current.length) return;
    const first = chunks.length === 0;
    chunks.push({
      syncType: first ? 0 : 3, // INITIAL_BOOTSTRAP, then RECENT
      conversations: current.map(({ lid: _lid, ...conversation }) => conversation),
      // Each chat's number and its LID, as WhatsApp's history carries them (without them, a receiver
      // asks the server for every chat's LID).
      phoneNumberToLidMappings: current.map((conversation) => ({ pnJid: conversation.id, lidJid: conversation.lid })),
      ...(first ? { pushnames: [{ id: own.jid, pushname: own.name }] } : {}),
      chunkOrder: chunks.length,
    });
    current = [];
    size = 0;
  };
  for (const conversation of conversations) {
    current.push(conversation);
    size += conversation.messages.length;
    if (size >= chunk) flush();
  }
  flush();
  for (const [index, item] of chunks.entries()) item.progress = Math.round(((index + 1) * 100) / chunks.length);
  return chunks;
}

async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const running = await startSimulator({ logLevel: 'silent', phoneDecrypt: false, initialPrekeyCount: 1000, media: false });
  answerQuestions({
    /** The history `phone`'s next paired device gets; answers how many chunks. */
    history: (message) => {
      const { phone } = message as unknown as { phone: string };
      const account = running.sim.getAccount(phone) as unknown as { jid?: string; name?: string };
      const chunks = generateHistory(MESSAGES, CHATS, CHUNK, { jid: account.jid ?? `${phone}@s.whatsapp.net`, name: account.name ?? phone });
      running.sim.phoneState.setHistory(phone, chunks);
      return { chunks: chunks.length };
    },
  });
  process.send?.({ websocketUrl: running.websocketUrl, controlUrl: running.controlUrl, rootPublicKey: running.rootPublicKey } satisfies SimInfo);
  process.on('disconnect', () => void running.stop().finally(() => process.exit(0)));
}

/** One device for the history (fresh: its history not yet pushed) and `SENDERS` ordinary ones. */
async function prepareSide(sim: SimInfo, simProcess: ChildProcess, prefix: string): Promise<{ device: Devices[number]; senders: Devices; chunks: number }> {
  const phone = `${prefix}999999`;
  await simControl(sim, 'POST', '/sim/accounts', { phone });
  const { chunks } = await ask<{ chunks: number }>(simProcess, 'history', { phone }, 600_000);
  const { creds } = await simControl<{ creds: unknown }>(sim, 'POST', `/sim/accounts/${phone}/provision`, { synced: false });
  const senders = await provisionDevices(sim, SENDERS, prefix);
  log(`history of ${MESSAGES} messages in ${CHATS} chats, ${chunks} chunks, set for ${phone}`);
  return { device: { phone, creds }, senders, chunks };
}

/**
 * When the simulator accepted the history device's login (ms): the one start both sides are timed from.
 * Baileys buffers its events while it takes in what the server pushes at login, so a side's own "open"
 * can come after much of the history was already handled (bare's clock started late: 0.5 s for 100,000).
 */
async function loginAt(sim: SimInfo, phone: string): Promise<number> {
  const devices = await simControl<Array<{ deviceId: number; lastLogin?: { at: number } }>>(sim, 'GET', `/sim/devices?phone=${phone}`);
  return Math.max(0, ...devices.filter((device) => device.deviceId !== 0).map((device) => device.lastLogin?.at ?? 0));
}

// --- the senders: paced, each awaited until answered -----------------------------------------------

interface SendStats {
  sent: number;
  failed: number;
  firstError?: string;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Sends `SEND_RATE` a second in all, round-robin over `count` senders, until stop(); latencies of each. */
function paceSends(count: number, send: (sender: number, index: number) => Promise<void>): { stop(): Promise<SendStats> } {
  const latencies: number[] = [];
  let failed = 0;
  let firstError: string | undefined;
  let index = 0;
  const inFlight = new Set<Promise<void>>();
  const timer =
    count > 0
      ? setInterval(() => {
          const i = index++;
          const t0 = performance.now();
          const running = send(i % count, i).then(
            () => void latencies.push(performance.now() - t0),
            (error: unknown) => {
              failed++;
              firstError ??= String((error as Error)?.message ?? error);
            },
          );
          inFlight.add(running);
          void running.finally(() => inFlight.delete(running));
        }, 1000 / SEND_RATE)
      : undefined;
  return {
    stop: async () => {
      clearInterval(timer);
      await Promise.all(inFlight);
      latencies.sort((a, b) => a - b);
      const at = (q: number) => (latencies.length ? round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]) : 0);
      return {
        sent: latencies.length,
        failed,
        ...(firstError ? { firstError } : {}),
        p50Ms: at(0.5),
        p99Ms: at(0.99),
        maxMs: latencies.length ? round(latencies[latencies.length - 1]) : 0,
      };
    },
  };
}

// --- bare Baileys ----------------------------------------------------------------------------------

interface Side {
  /** From the simulator's acceptance of the login to the last message handled (bare: counted; ours: its history event written). */
  seconds: number;
  /** From the side's own sight of the open connection (what was printed before). */
  secondsFromOpen: number;
  messages: number;
  chunks: number;
  peakRssMb: number;
  cpuMs: number;
  sends: SendStats;
}

async function runBareChild(): Promise<void> {
  process.once('message', (setup: { sim: SimInfo; device: Devices[number]; senders: Devices }) => {
    void (async () => {
      const baileys = await import('@whiskeysockets/baileys');
      baileys.WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(setup.sim.rootPublicKey, 'base64');
      const { openBareSockets } = await import('../support/sim-clients');
      const { sockets } = await openBareSockets(baileys, setup.senders, setup.sim.websocketUrl, pino({ level: 'silent' }));
      const acks = sockets.map((sock) => serverAcks(sock));
      const sends = paceSends(sockets.length, async (slot, index) => {
        const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
        const acked = new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no server ack in 30 s')), 30_000);
          acks[slot].set(messageId, (error) => {
            clearTimeout(timer);
            if (error) reject(new Error(`ack error ${error}`));
            else resolve();
          });
        });
        await sockets[slot].sendMessage(`${PEER}@s.whatsapp.net`, { text: `history bench send ${index}` }, { messageId });
        await acked;
      });
      let chunks = 0;
      const counted = await bareReceive(setup.sim, [setup.device], MESSAGES, 60_000, (event, data) => {
        if (event !== 'messaging-history.set') return 0;
        chunks++;
        return (data as { messages?: unknown[] }).messages?.length ?? 0;
      });
      const sent = await sends.stop();
      for (const sock of sockets) sock.end(undefined);
      process.send?.({ counted, chunks, sends: sent });
      process.once('disconnect', () => process.exit(0));
    })();
  });
}

async function runBare(sim: SimInfo, simProcess: ChildProcess): Promise<Side> {
  const { device, senders } = await prepareSide(sim, simProcess, '5531');
  const child = fork(process.argv[1], ['bare', ...process.argv.slice(2)], { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  type Answer = { counted: Awaited<ReturnType<typeof bareReceive>>; chunks: number; sends: SendStats };
  const answer = new Promise<Answer>((resolve, reject) => {
    child.once('message', (message) => resolve(message as Answer));
    child.once('exit', (code) => reject(new Error(`bare exited with ${code}`)));
  });
  child.send({ sim, device, senders });
  const { counted, chunks, sends } = await answer;
  await stopChild(child);
  const login = await loginAt(sim, device.phone);
  return {
    seconds: login && counted.lastAt ? round((counted.lastAt - login) / 1000, 2) : -1,
    secondsFromOpen: round((counted.lastAt - counted.openedAt) / 1000, 2),
    messages: counted.count,
    chunks,
    peakRssMb: counted.peakRssMb,
    cpuMs: counted.cpuMs,
    sends,
  };
}

// --- ours -------------------------------------------------------------------------------------------

function runWorkerChild(): void {
  let cpu: NodeJS.CpuUsage | undefined;
  const profiler = PROFILE ? windowProfiler() : undefined;
  let sql: Awaited<ReturnType<typeof timeStatements>> | undefined;
  serveWorkerChild({
    natsName: 'bench-history-worker',
    poolSize: POOL,
    logger: pino({ level: process.env.BENCH_LOG_LEVEL ?? 'silent' }, pino.destination(2)),
    worker: { workerId: 'bench-history-worker', capacity: SENDERS + 1 },
    measure: async () => {
      sql = await timeStatements();
      await profiler?.start();
      cpu = process.cpuUsage();
      return {};
    },
    measured: async () => {
      const used = process.cpuUsage(cpu);
      if (profiler && PROFILE) await profiler.stop(PROFILE);
      return { peakRssMb: peakRssMb(), cpuMs: Math.round((used.user + used.system) / 1000), sql: sql?.stop(12) ?? [] };
    },
  });
}

type Ours = Side & { historyEvents: number; messageRows: number; sql: Array<{ statement: string; calls: number; ms: number }> };

async function runOurs(
  sim: SimInfo,
  simProcess: ChildProcess,
  databaseUrl: string,
): Promise<{ ours: Ours; floor: Awaited<ReturnType<typeof storageFloor>> | null }> {
  const { openDatabase } = await import('@gw/persistence');
  const { NatsBus } = await import('@gw/bus');
  const { EnvReader } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/http-app');
  const { Agent, request } = await import('undici');
  const schema = `bench_history_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 4 });
  const prefix = `${schema}.`;
  let worker: ChildProcess | undefined;
  const bus = new PrefixedBus(await NatsBus.connect(NATS_URL, 'bench-history-gateway'), prefix);
  const agent = new Agent({ connections: Math.max(1, SENDERS), keepAliveTimeout: 60_000 });
  try {
    const { device, senders } = await prepareSide(sim, simProcess, '5532');
    const [historyId] = await insertInstances(dataSource, [device], 'rhistory');
    const senderIds = await insertInstances(dataSource, senders, 'rsender');
    await simControl(sim, 'POST', '/sim/accounts', { phone: PEER }).catch(() => undefined);
    const config = loadGatewayConfig(
      new EnvReader({ DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent', RPC_TIMEOUT_MS: '30000', RATE_LIMIT_INSTANCE: '1000000/s' }),
      [],
    );
    const app = await createHttpApp({ config, dataSource, bus, logger: pino({ level: 'silent' }) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/send/text`;
    // The history's instance is not there yet: the senders connect first and send while it arrives.
    await dataSource.query(`UPDATE instances SET desired_state = 'disconnected' WHERE id = $1`, [historyId]);
    worker = fork(process.argv[1], ['worker', ...process.argv.slice(2)], {
      execArgv: ['--expose-gc', ...process.execArgv.filter((flag) => flag.startsWith('--cpu-prof'))],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    await ask(worker, 'start', { setup: { databaseUrl, schema, prefix, sim } satisfies WorkerSetup }, 60_000);
    const connected = async (ids: string[]) => {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(
        `${UNCOUNTED} SELECT count(*)::int AS n FROM instances WHERE status = 'connected' AND id = ANY($1)`,
        [ids],
      );
      return n >= ids.length;
    };
    for (const deadline = Date.now() + 120_000; Date.now() < deadline && !(await connected(senderIds));) await sleep(250);
    const sends = paceSends(senderIds.length, async (slot, index) => {
      const response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', token: `tok-${senderIds[slot]}` },
        body: JSON.stringify({ number: PEER, text: `history bench send ${index}` }),
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
    });
    await ask(worker, 'measure');
    // Now the fresh pairing: the worker adopts it at its next reconcile (2 s) and the phone pushes the history.
    await dataSource.query(`UPDATE instances SET desired_state = 'connected' WHERE id = $1`, [historyId]);
    let openedAt = 0;
    let done: { n: number; messages: number; last: string | null } = { n: 0, messages: 0, last: null };
    let rows = 0;
    let lastChange = Date.now();
    while (Date.now() - lastChange < 60_000) {
      if (!openedAt && (await connected([historyId]))) openedAt = Date.now();
      const [events]: Array<{ n: number; messages: number; last: string | null }> = await dataSource.query(
        `${UNCOUNTED} SELECT count(*)::int AS n, coalesce(sum((payload->'counts'->>'messages')::int), 0)::int AS messages, max(created_at)::text AS last
           FROM outbox_events WHERE event_type = 'history' AND instance_id = $1`,
        [historyId],
      );
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`${UNCOUNTED} SELECT count(*)::int AS n FROM messages WHERE instance_id = $1`, [historyId]);
      if (events.messages !== done.messages || n !== rows) lastChange = Date.now();
      done = events;
      rows = n;
      if (done.messages >= MESSAGES && rows >= MESSAGES) break;
      await sleep(openedAt ? 250 : 100);
    }
    const sent = await sends.stop();
    if (openedAt) {
      // Where the time went: when each chunk's event was written, and when the first message was, after the connection.
      const at: Array<{ ms: number; messages: number }> = await dataSource.query(
        `${UNCOUNTED} SELECT (extract(epoch FROM created_at) * 1000)::float8 AS ms, (payload->'counts'->>'messages')::int AS messages
           FROM outbox_events WHERE event_type = 'history' AND instance_id = $1 ORDER BY id`,
        [historyId],
      );
      const [first]: Array<{ ms: number | null }> = await dataSource.query(
        `${UNCOUNTED} SELECT (extract(epoch FROM min(created_at)) * 1000)::float8 AS ms FROM messages WHERE instance_id = $1`,
        [historyId],
      );
      const offset = (ms: number | null) => (ms === null ? '-' : `${round((Number(ms) - openedAt) / 1000, 2)} s`);
      log(`first message row ${offset(first?.ms ?? null)}; history events: ${at.map((row) => `${offset(row.ms)} (${row.messages})`).join(', ')}`);
    }
    const measured = await ask<{ peakRssMb: number; cpuMs: number; sql: Ours['sql'] }>(worker, 'measured', {}, 120_000);
    await app.close();
    const login = await loginAt(sim, device.phone);
    // The floor: Postgres storing the same rows directly, in the same tables (indexes, trigger), same run.
    const floor = rows >= MESSAGES ? await storageFloor(dataSource, historyId, CHUNK, log) : null;
    const ours: Ours = {
      seconds: login && done.last ? round((Date.parse(done.last) - login) / 1000, 2) : -1,
      secondsFromOpen: openedAt && done.last ? round((Date.parse(done.last) - openedAt) / 1000, 2) : -1,
      messages: Math.min(done.messages, rows),
      chunks: done.n,
      historyEvents: done.n,
      messageRows: rows,
      peakRssMb: measured.peakRssMb,
      cpuMs: measured.cpuMs,
      sends: sent,
      sql: measured.sql,
    };
    return { ours, floor };
  } finally {
    await agent.close();
    if (worker) await stopChild(worker).catch(() => undefined);
    await bus.close().catch(() => undefined);
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

// --- orchestration --------------------------------------------------------------------------------

async function orchestrate(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const simProcess = fork(process.argv[1], ['sim', ...process.argv.slice(2)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const sim = await new Promise<SimInfo>((resolve, reject) => {
    simProcess.once('message', (message) => resolve(message as SimInfo));
    simProcess.once('exit', (code) => reject(new Error(`the simulator exited with ${code}`)));
  });
  try {
    await simControl(sim, 'POST', '/sim/accounts', { phone: PEER });
    log('bare side');
    const bare = await runBare(sim, simProcess);
    log(`bare: ${JSON.stringify(bare)}`);
    log('ours side');
    const { ours, floor } = await runOurs(sim, simProcess, databaseUrl);
    log(`ours: ${JSON.stringify(ours)}`);
    const ratio = ours.seconds > 0 && bare.seconds > 0 ? round(ours.seconds / bare.seconds, 2) : null;
    const ratioToFloor = floor && ours.seconds > 0 && floor.seconds > 0 ? round(ours.seconds / floor.seconds, 2) : null;
    log(
      `ours ${ours.seconds} s; bare ${bare.seconds} s (ratio ${ratio}); storage floor ${floor?.seconds ?? '-'} s ` +
        `(without the trigger ${floor?.secondsWithoutTrigger ?? '-'} s; ours ÷ floor ${ratioToFloor})`,
    );
    const complete = ours.messages >= MESSAGES && bare.messages >= MESSAGES;
    process.stdout.write(
      `${JSON.stringify({
        bench: 'history',
        node: process.version,
        messages: MESSAGES,
        chats: CHATS,
        chunk: CHUNK,
        senders: SENDERS,
        sendRate: SEND_RATE,
        bare,
        ours,
        ratio,
        floor,
        ratioToFloor,
        workerPeakRssMb: ours.peakRssMb,
        othersSendP99Ms: { ours: ours.sends.p99Ms, bare: bare.sends.p99Ms },
        complete,
        goal: 'ours: every message stored and its history events written in <= 60 s and <= 1.5 x bare; worker peak RSS <= 1024 MB',
        met: complete && ratio !== null && ours.seconds <= 60 && ratio <= 1.5 && ours.peakRssMb <= 1024,
      })}\n`,
    );
  } finally {
    simProcess.disconnect();
  }
}

async function main(): Promise<void> {
  if (role === 'sim') return runSim();
  if (role === 'bare') return runBareChild();
  if (role === 'worker') return runWorkerChild();
  await orchestrate();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
