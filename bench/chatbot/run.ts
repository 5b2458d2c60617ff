/**
 * The bench's own process: the bare model loop, the bare bot (bare-bot.ts), then ours (the worker, the
 * chatbot's follower and runner) measured over the rounds; prints the JSON.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Bus } from '@gw/bus';
import type { RoundTiming } from '@gw/chatbot';
import {
  ask,
  countStatements,
  loadBetween,
  loadMark,
  type LoadMark,
  PrefixedBus,
  startSessionWorker,
  stopChild,
  UNCOUNTED,
  windowProfiler,
  type WorkerSetup,
} from '../support/processes';
import { analyzeSchema, seedHistory, serverCpuBetween, serverCpuMark } from '../support/postgres';
import { medianRoundTripMs, startDbProxyChild } from '../support/db-latency';
import { bareBot, type BareBotRate } from './bare-bot';
import { busyCluster } from './busy-cluster';
import { atRate, startModel } from './model';
import {
  BARE_BOT,
  benchLogger,
  BUSY_CLUSTER,
  contactPhone,
  CONTACTS,
  DB_RTT_MS,
  GOAL_MARGIN_MS,
  HISTORY,
  log,
  NATS_URL,
  OWNER,
  RATE,
  RATES,
  round1,
  round2,
  SECONDS,
  sleep,
  type Stats,
  stats,
  SUSTAINED_P99_MS,
  sustains,
  TOPOLOGY,
  WARMUP,
  WARMUP_SECONDS,
  WINDOW_PROF,
} from './options';
import { simulator } from './simulator';

export async function runBench(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const model = await startModel();
  const total = Math.round(RATE * SECONDS);
  const result: Record<string, unknown> = {
    topology: TOPOLOGY,
    rates: RATES,
    seconds: SECONDS,
    contacts: CONTACTS,
    warmupSeconds: WARMUP_SECONDS,
    dbRttMs: DB_RTT_MS,
  };

  // --- bare: the same model called directly, at the highest rate asked for ------------------------
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
      result.bare = { ...(result.bare as object), bot: await bareBot(sim, model, RATES) };
    }
  } catch (error) {
    await sim.stop();
    await model.close();
    throw error;
  }

  // --- ours -------------------------------------------------------------------------------------
  const {
    openDatabase,
    ChatbotAdmissionRepository,
    ChatbotRepository,
    ChatbotTranscriptRepository,
    FileRepository,
    OutboxCursorRepository,
    QuickReplyRepository,
  } = await import('@gw/persistence');
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
    const repositories = {
      rounds: new ChatbotRepository(dataSource),
      admissions: new ChatbotAdmissionRepository(dataSource),
      quickReplies: new QuickReplyRepository(dataSource),
      files: new FileRepository(dataSource),
      transcripts: new ChatbotTranscriptRepository(dataSource),
      cursors: new OutboxCursorRepository(dataSource),
    };
    const services = createChatbotServices(repositories, bus, { ...readChatbotConfig(env), runnerId: 'bench' }, logger as never);
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
      const seen = await model.call(tags.get(turn) ?? '', (call) => call.requestAt >= round.modelStartedAt - 1 && call.requestAt <= round.modelEndedAt + 1);
      if (!measured || !seen) return;
      if (turn !== messageId) joined++;
      receive.push(seen.requestAt - sentAt);
      sentAts.set(messageId, sentAt);
      measuredTurns.push({ messageId, modelAt: seen.requestAt });
      answer.push(answeredAt - seen.answerAt);
      added.push(seen.requestAt - sentAt + (answeredAt - seen.answerAt));
      totals.push(answeredAt - sentAt);
    };
    // The measured rounds of the rate being measured (new arrays for each rate).
    let receive: number[] = [];
    let sentAts = new Map<string, number>();
    let measuredTurns: Array<{ messageId: string; modelAt: number }> = [];
    let answer: number[] = [];
    let added: number[] = [];
    let totals: number[] = [];
    log(`warm-up: ${WARMUP} rounds`);
    // Contact i % CONTACTS sends round i: the warm-up's rounds give every contact its Signal session.
    for (let i = 0; i < WARMUP; i++) await oneRound(CONTACTS * 100_000 + i, false);
    // The tables' size and statistics as a live database has them (autovacuum analyzes a table within a
    // minute of its first rows): plans made while every table looked empty or held the warm-up's rows
    // alone, the prepared statements' generic plans among them, are not what a deployment runs
    // (docs/adr/0024, docs/bench/send.md 2026-12-05).
    if (HISTORY > 0) await seedHistory(dataSource, schema, HISTORY);
    await analyzeSchema(dataSource, schema);
    // One rate measured: its own warm-up at the rate, then the rounds; what ours did at it.
    const measureAt = async (rate: number, step: number) => {
      receive = [];
      sentAts = new Map();
      measuredTurns = [];
      answer = [];
      added = [];
      totals = [];
      joined = 0;
      const total = Math.round(rate * SECONDS);
      // Round numbers of this rate's own (the model remembers every round's by tag).
      const tags = (step + 1) * 10_000_000;
      if (WARMUP_SECONDS > 0) {
        log(`warm-up: ${WARMUP_SECONDS} s at ${rate}/s`);
        await atRate(Math.round(rate * WARMUP_SECONDS), rate, (i) => oneRound(tags + i, false));
      }
      log(`measuring ${total} rounds at ${rate}/s`);
      // Count the SQL of the measured rounds: all of this process's and the worker's (its own process with
      // split; the receive and send paths), and ours by name below. The same window for the CPU and the
      // event loop of each process: the warm-up is done and nothing runs between the marks and the rounds.
      const counter = await countStatements();
      const [workerMark0, simMark0, modelMark0] = await Promise.all([
        workerChild ? ask<LoadMark>(workerChild, 'measure') : undefined,
        sim.load(),
        model.load(),
      ]);
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
      // A round not answered in 60 s: this rate is not sustained (the figures are of the rounds answered).
      const failure = await atRate(total, rate, (i) => oneRound(tags + 5_000_000 + i, true)).then(
        () => undefined,
        async (error: unknown) => {
          const summary = await dataSource.query(`SELECT status, outcome, count(*)::int AS n FROM chatbot_rounds GROUP BY 1, 2 ORDER BY 1, 2`);
          const [inputs] = await dataSource.query(`SELECT count(*)::int AS n FROM chatbot_inputs`);
          const [received] = await dataSource.query(`SELECT count(*)::int AS n FROM messages WHERE NOT from_me`);
          log(`at ${rate}/s: rounds ${JSON.stringify(summary)}; inputs ${inputs.n}; received messages ${received.n}`);
          return String((error as Error)?.message ?? error);
        },
      );
      const seconds = (performance.now() - t0) / 1000;
      const load = loadBetween(mark0, loadMark());
      const serverCpuMs = serverCpuBetween(serverMark0, await serverCpuMark(dataSource));
      if (WINDOW_PROF) await benchProfile.stop(`${WINDOW_PROF}/${workerChild ? 'chatbot' : 'chatbot+worker'}.${rate}.window.cpuprofile`);
      probing = false;
      await probe;
      const busyTransactions = await busy?.stop();
      const statements = counter.stop();
      const [workerMeasured, simMark1, modelMark1] = await Promise.all([
        workerChild ? ask<LoadMark & { statements: Array<[string, number]> }>(workerChild, 'measured') : undefined,
        sim.load(),
        model.load(),
      ]);
      const modelLoad = loadBetween(modelMark0, modelMark1);
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
      const figures = {
        rate,
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
          // The loopback model's process (a provider's side, as the simulator is WhatsApp's).
          model: round1(modelLoad.cpuMs / total),
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
        // The slowest measured rounds by added time: when in the window each began (s from its start) and
        // each hop, to tell a periodic stall (rounds bunched at one moment) from a slow hop of its own.
        slowestRounds: measuredTurns
          .map((turn, index) => ({ turn, added: added[index] }))
          .sort((a, b) => b.added - a.added)
          .slice(0, 8)
          .map(({ turn, added: roundAdded }) => {
            const sent = sentAts.get(turn.messageId) ?? NaN;
            const storedAt = stored.get(turn.messageId) ?? NaN;
            const admitted = admittedAt.get(turn.messageId) ?? NaN;
            return {
              atS: round2((sent - (performance.timeOrigin + t0)) / 1000),
              addedMs: round1(roundAdded),
              receiveToStoredMs: round1(storedAt - sent),
              storedToAdmittedMs: round1(admitted - storedAt),
              admittedToClaimedMs: round1(at(turn, 'claimedAt') - admitted),
              claimedToModelMs: round1(turn.modelAt - at(turn, 'claimedAt')),
              planStoredToAckedMs: round1(at(turn, 'sentAt') - at(turn, 'plannedAt')),
            };
          }),
        // The age of the oldest write transaction on the Postgres server (any database), sampled every 250 ms.
        oldestWriteTransactionMs: stats(oldestWrite),
        ...(busyTransactions !== undefined ? { busyClusterTransactions: busyTransactions } : {}),
        statementsPerRound: round1(countAll / total),
        statementsPerRoundByProcess: { bench: round1(benchStatements / total), worker: workerChild ? round1(workerStatements / total) : undefined },
        oursStatementsPerRound: round1(top.filter(([sql]) => isOurs(sql)).reduce((a, [, n]) => a + n, 0) / total),
        topStatements: top.slice(0, 25).map(([sql, n]) => [round1(n / total), sql]),
      };
      return { ...figures, ...(failure ? { failure } : {}) };
    };
    // Up the rates, to the highest the bare bot sustained (past it the goal has no rate to be judged at),
    // until ours no longer sustains one.
    const bareBotRates = (result.bare as { bot?: BareBotRate[] }).bot;
    const bareHighest = bareBotRates?.filter((measured) => measured.sustained).at(-1)?.rate;
    const oursByRate: Array<Awaited<ReturnType<typeof measureAt>> & { sustained: boolean }> = [];
    for (const [step, rate] of RATES.entries()) {
      if (bareBotRates && (bareHighest === undefined || rate > bareHighest) && oursByRate.length > 0) break;
      const measured = await measureAt(rate, step);
      const sustained = sustains(rate, measured);
      oursByRate.push({ ...measured, sustained });
      log(`ours at ${rate}/s: ${measured.roundsPerSecond} rounds/s, added p99 ${measured.addedMs.p99Ms} ms${sustained ? '' : ', not sustained'}`);
      if (!sustained) break;
    }
    // The goal's rate: the highest both sustain (ours alone with --bare-bot 0).
    const oursHighest = oursByRate.filter((measured) => measured.sustained).at(-1)?.rate;
    const goalRate = bareBotRates ? (oursHighest !== undefined && bareHighest !== undefined ? Math.min(oursHighest, bareHighest) : undefined) : oursHighest;
    const summary = (measured: { rate: number; sustained: boolean; roundsPerSecond: number; addedMs: Stats; failure?: string }) => ({
      rate: measured.rate,
      sustained: measured.sustained,
      roundsPerSecond: measured.roundsPerSecond,
      addedP99Ms: measured.addedMs.p99Ms,
      ...(measured.failure ? { failure: measured.failure } : {}),
    });
    const oursAt = oursByRate.find((measured) => measured.rate === goalRate) ?? oursByRate.at(-1);
    const bareAt = bareBotRates?.find((measured) => measured.rate === goalRate) ?? bareBotRates?.at(-1);
    // `ours` and `bare.bot`: each side at the goal's rate (or its last measured); `byRate` every rate measured.
    result.ours = oursAt;
    if (bareBotRates) result.bare = { ...(result.bare as object), bot: bareAt };
    result.byRate = { ours: oursByRate.map(summary), bareBot: bareBotRates?.map(summary) };
    result.goalRate = goalRate ?? null;
    result.goal = `ours.addedMs.p99Ms <= bare.bot.addedMs.p99Ms + ${GOAL_MARGIN_MS} at the highest rate both sustain (goalRate; sustained: every round answered, >= 95 % of the rate, added p99 <= ${SUSTAINED_P99_MS} ms)`;
    result.met = goalRate !== undefined && !!oursAt && !!bareAt && bareBotRates !== undefined && oursAt.addedMs.p99Ms <= bareAt.addedMs.p99Ms + GOAL_MARGIN_MS;
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
    await model.close();
    dbProxy?.stop();
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
