/**
 * bench/chatbot: chatbot rounds through the whole stack, next to a bare loop calling the same loopback
 * model directly. A contact's message (simulator phone → WhatsApp → Baileys → the worker's store and
 * outbox) → the chatbot's outbox follower (a round row) → a runner (claim, context, model call through
 * the AI SDK) → the loopback model, which answers at once → the answer through the worker's send op
 * until WhatsApp's server acked it. Contacts send at a fixed rate (each its own chat).
 *
 *   npm run bench -- chatbot [--rate 50] [--seconds 10] [--contacts 50] [--warmup <contacts>] [--warmup-seconds 1]
 *                            [--sim process|inline] [--topology split|single] [--busy-cluster 1] [--db-rtt-ms 0] [--bare-bot 1]
 *
 * `--db-rtt-ms N` puts Postgres N more ms of round trip away from ours (another machine's, as deployed):
 * a proxy in a process of its own holds each chunk towards it N ms (whole ms); the result carries the
 * median `SELECT 1` round trip measured directly and through the proxy (`dbRoundTripMs`).
 *
 * `--topology split` (default) is the deployed one: the session worker (Baileys, the inbound store, the
 * send op) runs in a child process of its own, as apps/session-worker does, and the bench's process hosts
 * the chatbot's follower and runner, as apps/dispatcher does, the two over real NATS (NATS_URL, default
 * nats://127.0.0.1:4222; every subject under a prefix of the run's own, the server may be shared) and
 * one Postgres schema. `--topology single` runs the worker in the bench's process too, over the
 * in-process bus (the embedded `npm start`).
 *
 * The simulator (WhatsApp's server and the contacts' phones, encrypting their messages) runs in a child
 * process of its own by default, driven through its control API, as WhatsApp is not in our process;
 * `--sim inline` runs it in the bench's process (the bench's CPU per round then includes it).
 *
 * CPU per round and event-loop utilisation are reported per process (`cpuMsPerRound`: bench, worker,
 * their sum `ours`, and the simulator's apart, as WhatsApp's side; Postgres and NATS not included);
 * SQL statements are counted in the bench's process and the worker's (its counts come over IPC).
 *
 * Per round: `receiveToModelMs` (the contact's message leaving the phone → the model's request arriving;
 * WhatsApp's own transport included) and `answerToAckMs` (the model's answer leaving the model → the
 * answer acked by the server); `addedMs` is their sum: what our side adds around the model. The bare
 * side's `modelCall` is the model call alone (same prompt size), in a loop at the same rate. A message that arrives
 * while its chat's previous round is still unanswered (a contact sends every contacts / rate seconds)
 * joins the chat's round still gathering and is measured with it (`joinedMessages` counts them). Goal:
 * added p99 ≤ 50 ms at 50 rounds/s. Prints one JSON object on stdout (progress on stderr).
 *
 * Before ours, `bare.bot` (`--bare-bot 0` skips it): a bare Baileys script as the bot on a number of its
 * own, answering the same contacts through the same model at the same rate, measured the same way
 * (receive → model request, model answer → server ack; its CPU and the simulator's per round). No store,
 * no queue, no second process: the floor of any bot's round on this machine (bareBot()).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import pino, { type Logger } from 'pino';
import type { Bus } from '@gw/bus';
import type { RoundTiming } from '@gw/chatbot';
import {
  answerQuestions,
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
import { analyzeSchema, serverCpuBetween, serverCpuMark } from '../support/postgres';
import { DB_PROXY_ROLE, dbRttMs, medianRoundTripMs, serveDbProxyChild, startDbProxyChild } from '../support/db-latency';
import { openBareSockets, serverAcks } from '../support/sim-clients';

type Role = 'bench' | 'sim-child' | 'worker-child' | 'bare-bot-child' | typeof DB_PROXY_ROLE;
const ROLE: Role = (['sim-child', 'worker-child', 'bare-bot-child', DB_PROXY_ROLE] as const).find((role) => role === process.argv[2]) ?? 'bench';
const args = new Map<string, string>();
for (let i = ROLE === 'bench' ? 2 : 3; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const RATE = Number(args.get('rate') ?? 50);
const SECONDS = Number(args.get('seconds') ?? 10);
const CONTACTS = Number(args.get('contacts') ?? 50);
/** Warm-up rounds, one per contact first (Signal sessions set up), not measured. */
const WARMUP = Number(args.get('warmup') ?? CONTACTS);
/**
 * Then this many seconds of rounds at the measured rate, not measured, as in a gateway that has been
 * running at that rate. Without it the first half second of every run held a burst of slow rounds
 * (added 50–100 ms), and the run's p99 mostly measured that burst. What warms up is not pinned down:
 * not the pools (7–8 connections before measuring, 8–10 after), so likely code and plans first run
 * with rounds overlapping (the contact warm-up runs one round at a time).
 */
const WARMUP_SECONDS = Number(args.get('warmup-seconds') ?? 1);
const SIM_MODE = args.get('sim') ?? 'process';
/**
 * `--bare-bot 0` skips the bare Baileys bot (on by default): before ours, a bare Baileys script answers
 * the same contacts through the same model at the same rate (bareBot()).
 */
const BARE_BOT = args.get('bare-bot') !== '0';
/** `--db-rtt-ms N`: ours (the worker, the follower and the runner) reach Postgres N ms of round trip away (bench/support/db-latency.ts). */
const DB_RTT_MS = ROLE === 'bench' ? dbRttMs(args) : 0;
const TOPOLOGY = args.get('topology') ?? 'split';
/** `--window-prof <dir>`: V8 CPU profiles of the bench's process and the worker's over the measured rounds only. */
const WINDOW_PROF = args.get('window-prof');
/**
 * `--busy-cluster 1`: during the measured rounds another connection of the server holds a transaction
 * with an id 1 s of every 1.5 s (a report, an operator's open psql, another service's long write), as
 * the consumers of the outbox meet on a shared server (docs/adr/0020).
 */
const BUSY_CLUSTER = args.get('busy-cluster') === '1';
if (TOPOLOGY !== 'split' && TOPOLOGY !== 'single') {
  process.stderr.write(`--topology is split or single, not "${TOPOLOGY}"\n`);
  process.exit(2);
}
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const SIM_OPTIONS = { logLevel: 'silent', initialPrekeyCount: 2000, media: false } as const;
const OWNER = '5533000000001';
/** The bare bot's own number: the contacts write to it as to ours, with Signal sessions of their own. */
const BARE_OWNER = '5533000000002';
const contactPhone = (index: number) => `5534${String(index).padStart(9, '0')}`;
const log = (line: string) => process.stderr.write(`[chatbot] ${line}\n`);
const round1 = (value: number) => Math.round(value * 10) / 10;
const round2 = (value: number) => Math.round(value * 100) / 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Stats {
  n: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => round1(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
  return { n: sorted.length, p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), maxMs: round1(sorted[sorted.length - 1] ?? NaN) };
}

interface ModelCall {
  requestAt: number;
  answerAt: number;
}

/**
 * A loopback OpenAI chat-completions server that answers at once; remembers when each request arrived
 * and was answered, under every tag of the contact's messages in it (the round's, and the chat's history).
 */
async function startModel(): Promise<{ url: string; seen: Map<string, ModelCall[]>; close: () => void }> {
  const seen = new Map<string, ModelCall[]>();
  const server = createServer((req, res) => {
    const requestAt = performance.timeOrigin + performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { model?: string; messages?: Array<{ role: string; content: unknown }> };
      const users = (body.messages ?? []).filter((message) => message.role === 'user');
      const text = users.map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? ''))).join('\n');
      const tags = [...new Set([...text.matchAll(/\[(r\d+)\]/g)].map((match) => match[1]))];
      const tag = tags.at(-1) ?? '';
      const answer = JSON.stringify({
        id: `chatcmpl-${tag}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: `ok ${tag}` }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      });
      res.setHeader('content-type', 'application/json');
      const answerAt = performance.timeOrigin + performance.now();
      for (const each of tags) seen.set(each, [...(seen.get(each) ?? []), { requestAt, answerAt }]);
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => server.close() };
}

/** Runs `task(i)` for i < count at `rate` per second (not waiting for one to finish before the next starts). */
async function atRate(count: number, rate: number, task: (index: number) => Promise<void>): Promise<void> {
  const started = performance.now();
  const running: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    running.push(task(i));
  }
  await Promise.all(running);
}

async function main(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const model = await startModel();
  const total = Math.round(RATE * SECONDS);
  const result: Record<string, unknown> = {
    topology: TOPOLOGY,
    rate: RATE,
    seconds: SECONDS,
    contacts: CONTACTS,
    warmupSeconds: WARMUP_SECONDS,
    dbRttMs: DB_RTT_MS,
    rounds: total,
  };

  // --- bare: the same model called directly, at the same rate ------------------------------------
  const prompt = { model: 'bench', messages: [{ role: 'system', content: 'You are a shop assistant.' }] };
  const bareLatencies: number[] = [];
  await atRate(total, RATE, async (i) => {
    const t0 = performance.now();
    const response = await fetch(`${model.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
      body: JSON.stringify({ ...prompt, messages: [...prompt.messages, { role: 'user', content: `oi [b${i}]` }] }),
    });
    await response.json();
    bareLatencies.push(performance.now() - t0);
  });
  result.bare = { modelCall: stats(bareLatencies) };
  log(`bare: p99 ${stats(bareLatencies).p99Ms} ms`);

  const sim = await simulator(startSimulator);
  try {
    for (let i = 0; i < CONTACTS; i++) await sim.createAccount(contactPhone(i));
    // --- bare Baileys as the bot: the floor of any bot's round on this machine ----------------------
    if (BARE_BOT) {
      result.bare = { ...(result.bare as object), bot: await bareBot(sim, model) };
      log(`bare bot: added p99 ${(result.bare as { bot: { addedMs: Stats } }).bot.addedMs.p99Ms} ms`);
    }
  } catch (error) {
    await sim.stop();
    model.close();
    throw error;
  }

  // --- ours -------------------------------------------------------------------------------------
  const { openDatabase, ChatbotRepository } = await import('@gw/persistence');
  const { InProcessBus, NatsBus } = await import('@gw/bus');
  const { EnvReader } = await import('@gw/platform');
  const { createChatbotServices, readChatbotConfig } = await import('@gw/chatbot');
  const directUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const dbProxy = DB_RTT_MS > 0 ? await startDbProxyChild(directUrl, DB_RTT_MS) : undefined;
  const databaseUrl = dbProxy?.url ?? directUrl;
  if (dbProxy) result.dbRoundTripMs = { direct: await medianRoundTripMs(directUrl), proxied: await medianRoundTripMs(dbProxy.url) };
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 20 });
  const logger = benchLogger();
  // split: the worker's process and ours share only NATS (under the run's prefix) and Postgres.
  const prefix = `${schema}.`;
  const bus: Bus = TOPOLOGY === 'split' ? new PrefixedBus(await NatsBus.connect(NATS_URL, 'bench-chatbot'), prefix) : new InProcessBus();
  let workerChild: ChildProcess | undefined;
  let chatbot: { stop(): Promise<void> } | undefined;
  let worker: { stop(): Promise<void> } | undefined;
  try {
    await sim.createAccount(OWNER);
    const creds = await sim.provision(OWNER);
    await dataSource.query(
      `INSERT INTO instances (id, token, name, desired_state, paired, owner, chatbot_enabled, chatbot_ignore_groups)
       VALUES ('rbot1', 'tok-bot', 'chatbot-bench', 'connected', true, $1, true, true)`,
      [OWNER],
    );
    await dataSource.query(`INSERT INTO auth_creds (instance_id, value) VALUES ('rbot1', $1)`, [creds]);
    const records = new ChatbotRepository(dataSource);
    const agent = await records.create('rbot1', 'agent', {
      name: 'Bench',
      provider: 'openai',
      model: 'bench',
      apikey: 'sk-bench',
      basePrompt: 'You are a shop assistant.',
      readMessages: false,
      typingDelay_seconds: 0,
      contextMaxMessages: 10,
      contextMinMessages: 1,
    });
    await records.create('rbot1', 'trigger', { type: 'agent', agent_id: agent.id, active: true, responseDelay_seconds: 0, wordsToStart: '' });

    const simAddress = { websocketUrl: sim.websocketUrl, rootPublicKey: sim.rootPublicKey };
    if (TOPOLOGY === 'split') {
      // Its stdout is not ours: libsignal prints there, and ours carries the one JSON object.
      workerChild = fork(process.argv[1], ['worker-child', ...(WINDOW_PROF ? ['--window-prof', WINDOW_PROF] : [])], {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      await ask(workerChild, 'start', { setup: { databaseUrl, schema, prefix, sim: simAddress } satisfies WorkerSetup }, 60_000);
    } else {
      worker = await startSessionWorker(dataSource, bus, simAddress, logger, { workerId: 'chatbot-bench' });
    }
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`SELECT count(*)::int AS n FROM instances WHERE status = 'connected'`);
      if (n === 1) break;
      await sleep(250);
    }
    await sleep(1000);
    const env = new EnvReader({ OPENAI_BASE_URL: `${model.url}/v1`, SSRF_ALLOWLIST: '127.0.0.0/8', CHATBOT_POLL_MS: '200' });
    const services = createChatbotServices(dataSource, bus, { ...readChatbotConfig(env), runnerId: 'bench' }, logger as never);
    // Rounds finish by the contact's message id (the round's turn: its last message). A message that came
    // while its chat's round was still gathering (the one before it not yet answered) joins that round and
    // is answered by it: its chat's next round to finish after it was sent, rounds of a chat finishing in
    // order. It is measured as answered then, with that round's model call.
    const admittedAt = new Map<string, number>();
    const timings = new Map<string, RoundTiming>();
    interface Sent {
      order: number;
      messageId: string;
      answered: (turn: string) => void;
    }
    const chats = new Map<number, { waiting: Sent[]; answered: Array<{ order: number; turn: string }> }>();
    const sentBy = new Map<string, { contact: number; order: number }>();
    const chat = (contact: number) => chats.get(contact) ?? chats.set(contact, { waiting: [], answered: [] }).get(contact)!;
    /** The turn `turn` (sent `order`-th) of `contact` was answered: so were the messages of its chat still waiting before it. */
    const turnAnswered = (contact: number, order: number, turn: string) => {
      const { waiting, answered } = chat(contact);
      answered.push({ order, turn });
      for (const message of waiting.filter((candidate) => candidate.order <= order)) {
        waiting.splice(waiting.indexOf(message), 1);
        message.answered(turn);
      }
    };
    services.runner.onRoundFinished = (timing) => {
      admittedAt.set(timing.turn, timing.receivedAt);
      timings.set(timing.turn, timing);
      const sender = sentBy.get(timing.turn);
      if (sender) turnAnswered(sender.contact, sender.order, timing.turn);
    };
    let sentCount = 0;
    services.follower.start();
    services.runner.start();
    chatbot = {
      stop: async () => {
        await services.follower.stop();
        await services.runner.stop();
      },
    };

    const tags = new Map<string, string>();
    let joined = 0;
    const oneRound = async (i: number, measured: boolean) => {
      const tag = `r${i}`;
      const contact = i % CONTACTS;
      const order = ++sentCount;
      const sentAt = performance.timeOrigin + performance.now();
      const messageId = await sim.send(contactPhone(contact), OWNER, `oi [${tag}]`);
      tags.set(messageId, tag);
      const turn = await new Promise<string>((resolve, reject) => {
        sentBy.set(messageId, { contact, order });
        // Answered before the send returned: by its own round, or by a later one it joined.
        if (timings.has(messageId)) return (turnAnswered(contact, order, messageId), resolve(messageId));
        const later = chat(contact).answered.find((round) => round.order > order);
        if (later) return resolve(later.turn);
        chat(contact).waiting.push({ order, messageId, answered: resolve });
        setTimeout(() => reject(new Error(`round ${tag} did not finish in 60 s`)), 60_000).unref();
      });
      const round = timings.get(turn)!;
      const answeredAt = round.sentAt;
      // Its round's model call: the request with the round's turn in it that the runner made (a later
      // round's request may carry the same message in its history).
      const seen = (model.seen.get(tags.get(turn) ?? '') ?? []).find(
        (call) => call.requestAt >= round.modelStartedAt - 1 && call.requestAt <= round.modelEndedAt + 1,
      );
      if (!measured || !seen) return;
      if (turn !== messageId) joined++;
      receive.push(seen.requestAt - sentAt);
      sentAts.set(messageId, sentAt);
      measuredTurns.push({ messageId, modelAt: seen.requestAt });
      answer.push(answeredAt - seen.answerAt);
      added.push(seen.requestAt - sentAt + (answeredAt - seen.answerAt));
      totals.push(answeredAt - sentAt);
    };
    const receive: number[] = [];
    const sentAts = new Map<string, number>();
    const measuredTurns: Array<{ messageId: string; modelAt: number }> = [];
    const answer: number[] = [];
    const added: number[] = [];
    const totals: number[] = [];
    log(`warm-up: ${WARMUP} rounds`);
    // Contact i % CONTACTS sends round i: the warm-up's rounds give every contact its Signal session.
    for (let i = 0; i < WARMUP; i++) await oneRound(CONTACTS * 100_000 + i, false);
    // The tables' statistics as a live database has them (autovacuum analyzes a table within a minute of
    // its first rows): plans made while every table looked empty, the prepared statements' generic plans
    // among them, are not what a deployment runs (docs/adr/0024).
    await analyzeSchema(dataSource, schema);
    if (WARMUP_SECONDS > 0) {
      log(`warm-up: ${WARMUP_SECONDS} s at ${RATE}/s`);
      await atRate(Math.round(RATE * WARMUP_SECONDS), RATE, (i) => oneRound(CONTACTS * 200_000 + i, false));
    }
    log(`measuring ${total} rounds at ${RATE}/s`);
    // Count the SQL of the measured rounds: all of this process's and the worker's (its own process with
    // split; the receive and send paths), and ours by name below. The same window for the CPU and the
    // event loop of each process: the warm-up is done and nothing runs between the marks and the rounds.
    const counter = await countStatements();
    const [workerMark0, simMark0] = await Promise.all([workerChild ? ask<LoadMark>(workerChild, 'measure') : undefined, sim.load()]);
    // The oldest write transaction on the Postgres server, every 250 ms: until ADR 0020 the outbox
    // followers handed on only events below the snapshot's xmin, and such a transaction held every round
    // back; it still tells what else ran on a shared server during the rounds.
    const oldestWrite: number[] = [];
    const busy = BUSY_CLUSTER ? busyCluster(databaseUrl) : undefined;
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const rows: Array<{ ms: number }> = await dataSource
          .query(
            `${UNCOUNTED} SELECT coalesce(max(extract(epoch FROM clock_timestamp() - xact_start) * 1000), 0)::float8 AS ms FROM pg_stat_activity WHERE backend_xid IS NOT NULL`,
          )
          .catch(() => []);
        if (rows.length) oldestWrite.push(Number(rows[0].ms));
        await sleep(250);
      }
    })();
    const benchProfile = windowProfiler();
    if (WINDOW_PROF) await benchProfile.start();
    const serverMark0 = await serverCpuMark(dataSource);
    const t0 = performance.now();
    const mark0 = loadMark();
    await atRate(total, RATE, (i) => oneRound(i, true)).catch(async (error: unknown) => {
      probing = false;
      const summary = await dataSource.query(`SELECT status, outcome, count(*)::int AS n FROM chatbot_rounds GROUP BY 1, 2 ORDER BY 1, 2`);
      const [inputs] = await dataSource.query(`SELECT count(*)::int AS n FROM chatbot_inputs`);
      const [received] = await dataSource.query(`SELECT count(*)::int AS n FROM messages WHERE NOT from_me`);
      log(`rounds: ${JSON.stringify(summary)}; inputs ${inputs.n}; received messages ${received.n}`);
      throw error;
    });
    const seconds = (performance.now() - t0) / 1000;
    const load = loadBetween(mark0, loadMark());
    const serverCpuMs = serverCpuBetween(serverMark0, await serverCpuMark(dataSource));
    if (WINDOW_PROF) await benchProfile.stop(`${WINDOW_PROF}/${workerChild ? 'chatbot' : 'chatbot+worker'}.window.cpuprofile`);
    probing = false;
    await probe;
    const busyTransactions = await busy?.stop();
    const statements = counter.stop();
    const [workerMeasured, simMark1] = await Promise.all([
      workerChild ? ask<LoadMark & { statements: Array<[string, number]> }>(workerChild, 'measured') : undefined,
      sim.load(),
    ]);
    const workerLoad = workerMark0 && workerMeasured ? loadBetween(workerMark0, workerMeasured) : undefined;
    const simLoad = simMark0 && simMark1 ? loadBetween(simMark0, simMark1) : undefined;
    const benchStatements = [...statements.values()].reduce((a, b) => a + b, 0);
    let workerStatements = 0;
    for (const [sql, n] of workerMeasured?.statements ?? []) {
      statements.set(sql, (statements.get(sql) ?? 0) + n);
      workerStatements += n;
    }
    // Ours: the follower's cursor and admission, the runner's claim, reads, plan and finish (chatbot_*,
    // outbox_cursors, the chat's lead and the ai_metadata write); the rest is the worker's receive and send.
    const isOurs = (sql: string) =>
      /chatbot_|outbox_cursors|FROM instances WHERE chatbot_enabled|SELECT .*chatbot_stop|from_me, .*ORDER BY .*LIMIT|ai_metadata|^(BEGIN|COMMIT|ROLLBACK|START TRANSACTION)/i.test(
        sql,
      );
    const countAll = [...statements.values()].reduce((a, b) => a + b, 0);
    const top = [...statements.entries()].sort((a, b) => b[1] - a[1]);
    // Where the receive side's time goes: the worker stored the message (Baileys decrypted it) → the
    // follower admitted it into a round → the runner's model request.
    const stored = new Map<string, number>(
      (
        (await dataSource.query(`SELECT message_id, (extract(epoch FROM created_at) * 1000)::float8 AS at FROM messages WHERE message_id = ANY($1::text[])`, [
          measuredTurns.map((turn) => turn.messageId),
        ])) as Array<{ message_id: string; at: number }>
      ).map((row) => [row.message_id, Number(row.at)]),
    );
    const at = (turn: { messageId: string }, key: keyof RoundTiming) => Number(timings.get(turn.messageId)?.[key] ?? NaN);
    const hop = (of: (turn: { messageId: string; modelAt: number }) => number) => stats(measuredTurns.map(of).filter((value) => Number.isFinite(value)));
    result.ours = {
      roundsPerSecond: round1(total / seconds),
      // Measured messages that joined their chat's round still gathering (their chat's previous one not yet
      // answered, a contact sending every contacts / rate seconds): answered, and measured, with that round.
      joinedMessages: joined,
      // This process's CPU per round (Postgres not included); steadier than latency on a shared machine. With
      // split the follower and the runner; with single also Baileys and the worker; with --sim inline also the
      // simulator's phones.
      processCpuMsPerRound: round1(load.cpuMs / total),
      // Per process: the bench's (above), the worker's child (split), their sum (ours), and the simulator's
      // child apart (WhatsApp's side; absent with --sim inline, where it is in the bench's).
      cpuMsPerRound: {
        bench: round1(load.cpuMs / total),
        worker: workerLoad ? round1(workerLoad.cpuMs / total) : undefined,
        ours: round1((load.cpuMs + (workerLoad?.cpuMs ?? 0)) / total),
        simulator: simLoad ? round1(simLoad.cpuMs / total) : undefined,
        // The Postgres server's backends of this database (when it runs on this machine; with
        // --db-rtt-ms, the proxy's process is not counted anywhere).
        postgres: serverCpuMs === undefined ? undefined : round1(serverCpuMs / total),
      },
      // The share of the measured time each process's event loop was busy (1: every hop waits on it).
      eventLoopUtilization: {
        bench: round2(load.eventLoopUtilization),
        worker: workerLoad ? round2(workerLoad.eventLoopUtilization) : undefined,
        simulator: simLoad ? round2(simLoad.eventLoopUtilization) : undefined,
      },
      receiveToModelMs: stats(receive),
      // The phone's message → its row (the transaction that stored it began): Baileys' receive and decrypt, then the worker's inbound queue.
      receiveToStoredMs: stats(
        measuredTurns
          .filter((turn) => stored.has(turn.messageId) && sentAts.has(turn.messageId))
          .map((turn) => stored.get(turn.messageId)! - sentAts.get(turn.messageId)!),
      ),
      storedToModelMs: stats(measuredTurns.filter((turn) => stored.has(turn.messageId)).map((turn) => turn.modelAt - stored.get(turn.messageId)!)),
      admittedToModelMs: stats(measuredTurns.filter((turn) => admittedAt.has(turn.messageId)).map((turn) => turn.modelAt - admittedAt.get(turn.messageId)!)),
      answerToAckMs: stats(answer),
      addedMs: stats(added),
      totalMs: stats(totals),
      // Per hop, from the round's own timestamps: stored (the message row) → admitted (the round row) →
      // claimed (the runner took it) → model request; model answer → plan stored → answer acked → round finished.
      hops: {
        storedToAdmitted: hop((turn) =>
          stored.has(turn.messageId) && admittedAt.has(turn.messageId) ? admittedAt.get(turn.messageId)! - stored.get(turn.messageId)! : NaN,
        ),
        admittedToClaimed: hop((turn) => at(turn, 'claimedAt') - (admittedAt.get(turn.messageId) ?? NaN)),
        claimedToModel: hop((turn) => turn.modelAt - at(turn, 'claimedAt')),
        modelAnswerToPlanStored: hop((turn) => at(turn, 'plannedAt') - at(turn, 'modelEndedAt')),
        planStoredToAcked: hop((turn) => at(turn, 'sentAt') - at(turn, 'plannedAt')),
        ackedToFinished: hop((turn) => at(turn, 'finishedAt') - at(turn, 'sentAt')),
      },
      // The age of the oldest write transaction on the Postgres server (any database), sampled every 250 ms.
      oldestWriteTransactionMs: stats(oldestWrite),
      ...(busyTransactions !== undefined ? { busyClusterTransactions: busyTransactions } : {}),
      statementsPerRound: round1(countAll / total),
      statementsPerRoundByProcess: { bench: round1(benchStatements / total), worker: workerChild ? round1(workerStatements / total) : undefined },
      oursStatementsPerRound: round1(top.filter(([sql]) => isOurs(sql)).reduce((a, [, n]) => a + n, 0) / total),
      topStatements: top.slice(0, 25).map(([sql, n]) => [round1(n / total), sql]),
    };
    // Next to it, what the bare Baileys bot added at the same rate on the same machine (null with --bare-bot 0).
    const bareBotAdded = (result.bare as { bot?: { addedMs: Stats } }).bot?.addedMs.p99Ms ?? null;
    result.goal = { addedP99Ms: 50, met: stats(added).p99Ms <= 50, bareBotAddedP99Ms: bareBotAdded };
  } catch (error) {
    // Said before the cleanup below, which may take a while (the children's graceful stops).
    log(`failed (cleaning up): ${(error as Error)?.message ?? error}`);
    throw error;
  } finally {
    // The chatbot, then the worker, also after a failure: their loops must not outlive the DataSource closed below.
    await chatbot?.stop();
    await worker?.stop();
    if (workerChild) await stopChild(workerChild);
    await bus.close();
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
    await sim.stop();
    model.close();
    dbProxy?.stop();
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** What the bare bot's child tells the bench of each contact's message it answered. */
interface BareAnswered {
  answered: string;
  /** When WhatsApp's server acked the answer (ms since the epoch, this machine's clock). */
  ackedAt: number;
}

/**
 * The bare side of a round: a bare Baileys script as the bot, in a child process of its own (its CPU
 * apart), on its own number: on each contact's message it calls the same loopback model with the same
 * prompt and sends the answer, awaited until the server's ack. No store, no queue, no durability, no
 * second process: what any bot on Baileys costs at least, on this machine, against this simulator. The
 * same contacts send at the same rate, one round per contact first (their Signal sessions), then
 * `--warmup-seconds` at the rate, not measured; measured as ours is (receive → model request, model
 * answer → server ack). The simulator is the same process, and ours runs after this one has stopped.
 */
async function bareBot(sim: Sim, model: Awaited<ReturnType<typeof startModel>>): Promise<Record<string, unknown>> {
  await sim.createAccount(BARE_OWNER);
  const creds = await sim.provision(BARE_OWNER);
  const child = fork(process.argv[1], ['bare-bot-child'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    const answered = new Map<string, number>();
    const waiting = new Map<string, (ackedAt: number) => void>();
    child.on('message', (message: Partial<BareAnswered>) => {
      if (typeof message?.answered !== 'string') return;
      const resolve = waiting.get(message.answered);
      if (resolve) {
        waiting.delete(message.answered);
        resolve(Number(message.ackedAt));
      } else answered.set(message.answered, Number(message.ackedAt));
    });
    await ask(child, 'start', { websocketUrl: sim.websocketUrl, rootPublicKey: sim.rootPublicKey, creds, modelUrl: model.url }, 60_000);
    const receive: number[] = [];
    const answer: number[] = [];
    const added: number[] = [];
    const oneRound = async (i: number, measured: boolean) => {
      const tag = `r${i}`;
      const sentAt = performance.timeOrigin + performance.now();
      const messageId = await sim.send(contactPhone(i % CONTACTS), BARE_OWNER, `oi [${tag}]`);
      const ackedAt =
        answered.get(messageId) ??
        (await new Promise<number>((resolve, reject) => {
          waiting.set(messageId, resolve);
          setTimeout(() => reject(new Error(`the bare bot did not answer ${tag} in 60 s`)), 60_000).unref();
        }));
      answered.delete(messageId);
      const seen = model.seen.get(tag)?.[0];
      if (!measured || !seen) return;
      receive.push(seen.requestAt - sentAt);
      answer.push(ackedAt - seen.answerAt);
      added.push(seen.requestAt - sentAt + (ackedAt - seen.answerAt));
    };
    // Tags of their own: the model remembers every round's by tag, ours' among them.
    const base = CONTACTS * 1_000_000;
    log(`bare bot: warm-up ${WARMUP} rounds`);
    for (let i = 0; i < WARMUP; i++) await oneRound(base + i, false);
    const total = Math.round(RATE * SECONDS);
    if (WARMUP_SECONDS > 0) await atRate(Math.round(RATE * WARMUP_SECONDS), RATE, (i) => oneRound(base + 100_000 + i, false));
    log(`bare bot: measuring ${total} rounds at ${RATE}/s`);
    const [bot0, sim0] = await Promise.all([ask<LoadMark>(child, 'measure'), sim.load()]);
    const t0 = performance.now();
    await atRate(total, RATE, (i) => oneRound(base + 200_000 + i, true));
    const seconds = (performance.now() - t0) / 1000;
    const [bot1, sim1] = await Promise.all([ask<LoadMark>(child, 'measure'), sim.load()]);
    const botLoad = loadBetween(bot0, bot1);
    const simLoad = sim0 && sim1 ? loadBetween(sim0, sim1) : undefined;
    return {
      roundsPerSecond: round1(total / seconds),
      cpuMsPerRound: { bot: round1(botLoad.cpuMs / total), simulator: simLoad ? round1(simLoad.cpuMs / total) : undefined },
      eventLoopUtilization: { bot: round2(botLoad.eventLoopUtilization), simulator: simLoad ? round2(simLoad.eventLoopUtilization) : undefined },
      receiveToModelMs: stats(receive),
      answerToAckMs: stats(answer),
      addedMs: stats(added),
    };
  } finally {
    await stopChild(child);
  }
}

/** The bare bot's child process: one Baileys socket with in-memory auth, answering every contact's text through the model. */
function bareBotChild(): void {
  answerQuestions({
    start: async (setup) => {
      const { websocketUrl, rootPublicKey, creds, modelUrl } = setup as unknown as {
        websocketUrl: string;
        rootPublicKey: string;
        creds: string;
        modelUrl: string;
      };
      const baileys = await import('@whiskeysockets/baileys');
      baileys.WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(rootPublicKey, 'base64');
      const { sockets, open } = await openBareSockets(baileys, [{ creds: JSON.parse(creds) }], websocketUrl, pino({ level: 'silent' }));
      if (open !== 1) throw new Error('the bare bot did not connect in 60 s');
      const [sock] = sockets;
      process.once('disconnect', () => {
        sock.end(undefined);
        process.exit(0);
      });
      const acks = serverAcks(sock);
      const answerOne = async (jid: string, incomingId: string, text: string) => {
        const response = await fetch(`${modelUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
          body: JSON.stringify({
            model: 'bench',
            messages: [
              { role: 'system', content: 'You are a shop assistant.' },
              { role: 'user', content: text },
            ],
          }),
        });
        const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
        const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
        const acked = new Promise<void>((resolve) => acks.set(messageId, () => resolve()));
        await sock.sendMessage(jid, { text: body.choices[0].message.content }, { messageId });
        await acked;
        process.send?.({ answered: incomingId, ackedAt: performance.timeOrigin + performance.now() } satisfies BareAnswered);
      };
      sock.ev.on('messages.upsert', ({ messages, type }) => {
        if (type !== 'notify') return;
        for (const message of messages) {
          const text = message.message?.conversation ?? message.message?.extendedTextMessage?.text;
          if (message.key.fromMe || !message.key.remoteJid || !message.key.id || !text) continue;
          answerOne(message.key.remoteJid, message.key.id, text).catch((error: unknown) => log(`bare bot: ${(error as Error)?.message ?? error}`));
        }
      });
      return {};
    },
    measure: () => loadMark(),
  });
}

interface Sim {
  websocketUrl: string;
  rootPublicKey: string;
  createAccount(phone: string): Promise<void>;
  /** The linked device's creds, BufferJSON-serialised. */
  provision(phone: string): Promise<string>;
  /** A contact's phone sends a text; the message id. */
  send(from: string, to: string, text: string): Promise<string>;
  /** The simulator's process's CPU and event loop so far (null inline: it is the bench's). */
  load(): Promise<LoadMark | null>;
  stop(): Promise<void>;
}

type StartSimulator = (typeof import('@gw/wa-sim'))['startSimulator'];

/** The simulator in a child process (driven by its control API), or in this one with `--sim inline`. */
async function simulator(startSimulator: StartSimulator): Promise<Sim> {
  const { BufferJSON } = await import('@whiskeysockets/baileys');
  if (SIM_MODE === 'inline') {
    const running = await startSimulator(SIM_OPTIONS);
    return {
      websocketUrl: running.websocketUrl,
      rootPublicKey: running.rootPublicKey,
      createAccount: async (phone) => void running.sim.createAccount({ phone }),
      provision: async (phone) => JSON.stringify(running.sim.provisionDevice(phone).creds, BufferJSON.replacer),
      send: async (from, to, text) => (await running.sim.sendMessage(from, to, { text })).id,
      load: async () => null,
      stop: () => running.stop(),
    };
  }
  const child = fork(process.argv[1], ['sim-child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const info = await new Promise<{ websocketUrl: string; controlUrl: string; rootPublicKey: string }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as never));
    child.once('exit', (code) => reject(new Error(`the simulator process exited (${code})`)));
  });
  const control = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await fetch(`${info.controlUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  return {
    websocketUrl: info.websocketUrl,
    rootPublicKey: info.rootPublicKey,
    createAccount: async (phone) => void (await control('/sim/accounts', { phone })),
    provision: async (phone) => JSON.stringify((await control<{ creds: unknown }>(`/sim/accounts/${phone}/provision`, {})).creds),
    send: async (from, to, text) => (await control<{ id: string }>(`/sim/accounts/${from}/send`, { to, text })).id,
    load: () => ask<LoadMark>(child, 'load'),
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}

/** The child process's side of `--sim process`: the simulator, until the bench disconnects. */
async function simChild(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const running = await startSimulator(SIM_OPTIONS);
  answerQuestions({ load: () => loadMark() });
  process.send?.({ websocketUrl: running.websocketUrl, controlUrl: running.controlUrl, rootPublicKey: running.rootPublicKey });
  process.once('disconnect', () => void running.stop().finally(() => process.exit(0)));
}

const benchLogger = (): Logger => pino({ level: process.env.BENCH_LOG_LEVEL ?? 'silent' }, pino.destination(2));

/**
 * The child process's side of `--topology split`: the session worker as apps/session-worker runs it; it
 * counts its statements and marks its load when the bench asks.
 */
async function workerChild(): Promise<void> {
  const profile = windowProfiler();
  let counter: { stop(): Map<string, number> } | undefined;
  serveWorkerChild({
    natsName: 'bench-chatbot-worker',
    poolSize: 20,
    logger: benchLogger(),
    worker: { workerId: 'chatbot-bench' },
    measure: async () => {
      if (WINDOW_PROF) await profile.start();
      counter = await countStatements();
      return loadMark();
    },
    measured: async () => {
      if (WINDOW_PROF) await profile.stop(`${WINDOW_PROF}/worker.window.cpuprofile`);
      return { ...loadMark(), statements: [...(counter?.stop() ?? new Map<string, number>()).entries()] };
    },
  });
}

const roles: Record<Role, () => Promise<void>> = {
  bench: () => main().then(() => process.exit(0)),
  'sim-child': simChild,
  'worker-child': workerChild,
  'bare-bot-child': async () => bareBotChild(),
  [DB_PROXY_ROLE]: () => serveDbProxyChild(args),
};
// The children live until the bench disconnects; the bench exits when it is done.
roles[ROLE]().then(
  () => undefined,
  (error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
    process.exit(1);
  },
);

/** `--busy-cluster`: a transaction with an id held 1 s of every 1.5 s on a connection of its own, until stopped; how many it ran. */
function busyCluster(databaseUrl: string): { stop: () => Promise<number> } {
  let running = true;
  let transactions = 0;
  const client = new Client({ connectionString: databaseUrl });
  const loop = (async () => {
    await client.connect();
    while (running) {
      await client.query('BEGIN');
      await client.query('SELECT pg_current_xact_id()');
      await sleep(1_000);
      await client.query('COMMIT');
      transactions++;
      if (running) await sleep(500);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop.finally(() => client.end());
      return transactions;
    },
  };
}
