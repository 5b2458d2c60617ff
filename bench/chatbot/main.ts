/**
 * bench/chatbot: chatbot rounds through the whole stack, next to a bare loop calling the same loopback
 * model directly. A contact's message (simulator phone → WhatsApp → Baileys → the worker's store and
 * outbox) → the chatbot's outbox follower (a round row) → a runner (claim, context, model call through
 * the AI SDK) → the loopback model, which answers at once → the answer through the worker's send op
 * until WhatsApp's server acked it. Contacts send at a fixed rate (each its own chat).
 *
 *   npm run bench -- chatbot [--rate 50] [--seconds 10] [--contacts 50] [--warmup <contacts>] [--sim process|inline]
 *
 * The simulator (WhatsApp's server and the contacts' phones, encrypting their messages) runs in a child
 * process of its own by default, driven through its control API, as WhatsApp is not in our process;
 * `--sim inline` runs it in the bench's process (CPU per round then includes it).
 *
 * Per round: `receiveToModelMs` (the contact's message leaving the phone → the model's request arriving;
 * WhatsApp's own transport included) and `answerToAckMs` (the model's answer leaving the model → the
 * answer acked by the server); `addedMs` is their sum: what our side adds around the model. The bare
 * side is the model call alone (same prompt size), in a loop at the same rate. Goal: added p99 ≤ 50 ms
 * at 50 rounds/s. Prints one JSON object on stdout (progress on stderr).
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { RoundTiming } from '@gw/chatbot';

const SIM_CHILD = process.argv[2] === 'sim-child';
const args = new Map<string, string>();
for (let i = SIM_CHILD ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const RATE = Number(args.get('rate') ?? 50);
const SECONDS = Number(args.get('seconds') ?? 10);
const CONTACTS = Number(args.get('contacts') ?? 50);
/** Warm-up rounds, one per contact first (Signal sessions set up), not measured. */
const WARMUP = Number(args.get('warmup') ?? CONTACTS);
const SIM_MODE = args.get('sim') ?? 'process';
const SIM_OPTIONS = { logLevel: 'silent', initialPrekeyCount: 2000, media: false } as const;
const OWNER = '5533000000001';
const contactPhone = (index: number) => `5534${String(index).padStart(9, '0')}`;
const log = (line: string) => process.stderr.write(`[chatbot] ${line}\n`);
const round1 = (value: number) => Math.round(value * 10) / 10;
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

/** A loopback OpenAI chat-completions server that answers at once; remembers when each tagged request arrived and was answered. */
async function startModel(): Promise<{ url: string; seen: Map<string, { requestAt: number; answerAt: number }>; close: () => void }> {
  const seen = new Map<string, { requestAt: number; answerAt: number }>();
  const server = createServer((req, res) => {
    const requestAt = performance.timeOrigin + performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { model?: string; messages?: Array<{ role: string; content: unknown }> };
      const last = [...(body.messages ?? [])].reverse().find((message) => message.role === 'user');
      const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
      const tag = /\[(r\d+)\]/.exec(text)?.[1] ?? '';
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
      if (tag) seen.set(tag, { requestAt, answerAt });
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
  const result: Record<string, unknown> = { rate: RATE, seconds: SECONDS, contacts: CONTACTS, rounds: total };

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

  // --- ours -------------------------------------------------------------------------------------
  const sim = await simulator(startSimulator);
  const { openDatabase, ChatbotRepository } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const { EnvReader } = await import('@gw/platform');
  const { createChatbotServices, readChatbotConfig } = await import('@gw/chatbot');
  const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: 20 });
  const bus = new InProcessBus();
  const logger = pino({ level: process.env.BENCH_LOG_LEVEL ?? 'silent' }, pino.destination(2));
  try {
    await sim.createAccount(OWNER);
    for (let i = 0; i < CONTACTS; i++) await sim.createAccount(contactPhone(i));
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

    const worker = new SessionWorker({
      dataSource,
      bus,
      logger,
      config: sessionWorkerConfig({
        workerId: 'chatbot-bench',
        simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
      }),
    });
    await worker.start();
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`SELECT count(*)::int AS n FROM instances WHERE status = 'connected'`);
      if (n === 1) break;
      await sleep(250);
    }
    await sleep(1000);
    const env = new EnvReader({ OPENAI_BASE_URL: `${model.url}/v1`, SSRF_ALLOWLIST: '127.0.0.0/8', CHATBOT_POLL_MS: '200' });
    const services = createChatbotServices(dataSource, bus, { ...readChatbotConfig(env), runnerId: 'bench' }, logger as never);
    // Rounds finish by the contact's message id (the round's turn).
    const finished = new Map<string, (sentAt: number) => void>();
    const early = new Map<string, number>();
    const admittedAt = new Map<string, number>();
    const timings = new Map<string, RoundTiming>();
    services.runner.onRoundFinished = (timing) => {
      admittedAt.set(timing.turn, timing.receivedAt);
      timings.set(timing.turn, timing);
      const resolve = finished.get(timing.turn);
      if (resolve) resolve(timing.sentAt);
      else early.set(timing.turn, timing.sentAt);
    };
    services.follower.start();
    services.runner.start();

    const oneRound = async (i: number, measured: boolean) => {
      const tag = `r${i}`;
      const sentAt = performance.timeOrigin + performance.now();
      const messageId = await sim.send(contactPhone(i % CONTACTS), OWNER, `oi [${tag}]`);
      const answeredAt = await new Promise<number>((resolve, reject) => {
        if (early.has(messageId)) return resolve(early.get(messageId)!);
        finished.set(messageId, resolve);
        setTimeout(() => reject(new Error(`round ${tag} did not finish in 60 s`)), 60_000).unref();
      });
      finished.delete(messageId);
      const seen = model.seen.get(tag);
      if (!measured || !seen) return;
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
    log(`measuring ${total} rounds at ${RATE}/s`);
    // Count the SQL of the measured rounds (pg's Client.query sees every statement TypeORM issues): all of
    // this process's, the worker's receive and send paths included, and ours by name below.
    const pg = await import('pg');
    const statements = new Map<string, number>();
    const clientPrototype = (pg.default?.Client ?? pg.Client).prototype as unknown as { query: (...call: unknown[]) => unknown };
    const originalQuery = clientPrototype.query;
    let counting = true;
    clientPrototype.query = function (this: unknown, ...call: unknown[]) {
      if (counting) {
        const first = call[0] as string | { text?: string };
        const text = (typeof first === 'string' ? first : (first?.text ?? '?'))
          .replace(/\s+/g, ' ')
          .replace(/'[^']*'/g, "'…'")
          .slice(0, 120);
        statements.set(text, (statements.get(text) ?? 0) + 1);
      }
      return originalQuery.apply(this, call);
    };
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await atRate(total, RATE, (i) => oneRound(i, true)).catch(async (error: unknown) => {
      const summary = await dataSource.query(`SELECT status, outcome, count(*)::int AS n FROM chatbot_rounds GROUP BY 1, 2 ORDER BY 1, 2`);
      const [inputs] = await dataSource.query(`SELECT count(*)::int AS n FROM chatbot_inputs`);
      const [received] = await dataSource.query(`SELECT count(*)::int AS n FROM messages WHERE NOT from_me`);
      log(`rounds: ${JSON.stringify(summary)}; inputs ${inputs.n}; received messages ${received.n}`);
      throw error;
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    counting = false;
    clientPrototype.query = originalQuery;
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
      // This process's CPU per round: the simulator's phones, Baileys and the worker, the follower and the runner
      // (Postgres not included); steadier than latency on a shared machine.
      processCpuMsPerRound: round1((cpu.user + cpu.system) / 1000 / total),
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
      statementsPerRound: round1(countAll / total),
      oursStatementsPerRound: round1(top.filter(([sql]) => isOurs(sql)).reduce((a, [, n]) => a + n, 0) / total),
      topStatements: top.slice(0, 25).map(([sql, n]) => [round1(n / total), sql]),
    };
    result.goal = { addedP99Ms: 50, met: stats(added).p99Ms <= 50 };
    await services.follower.stop();
    await services.runner.stop();
    await worker.stop();
    await bus.close();
  } finally {
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
    await sim.stop();
    model.close();
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

interface Sim {
  websocketUrl: string;
  rootPublicKey: string;
  createAccount(phone: string): Promise<void>;
  /** The linked device's creds, BufferJSON-serialised. */
  provision(phone: string): Promise<string>;
  /** A contact's phone sends a text; the message id. */
  send(from: string, to: string, text: string): Promise<string>;
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
  process.send?.({ websocketUrl: running.websocketUrl, controlUrl: running.controlUrl, rootPublicKey: running.rootPublicKey });
  process.once('disconnect', () => void running.stop().finally(() => process.exit(0)));
}

// The simulator's child lives until the bench disconnects; the bench exits when it is done.
(SIM_CHILD ? simChild() : main().then(() => process.exit(0))).then(
  () => undefined,
  (error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? error}\n`);
    process.exit(1);
  },
);
