/** `bare.bot`: a bare Baileys script as the bot, the floor of any bot's round on this machine. */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { answerQuestions, ask, loadBetween, loadMark, type LoadMark, stopChild } from '../support/processes';
import { openBareSockets, serverAcks } from '../support/sim-clients';
import { atRate, type Model } from './model';
import { BARE_OWNER, contactPhone, CONTACTS, log, round1, round2, SECONDS, stats, sustains, WARMUP, WARMUP_SECONDS } from './options';
import type { Sim } from './simulator';
import type { Stats } from './options';

/** The bare bot at one rate: what it did, and whether it sustained the rate (sustains()). */
export interface BareBotRate {
  rate: number;
  sustained: boolean;
  roundsPerSecond: number;
  addedMs: Stats;
  failure?: string;
  [figure: string]: unknown;
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
export async function bareBot(sim: Sim, model: Model, rates: number[]): Promise<BareBotRate[]> {
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
    let receive: number[] = [];
    let answer: number[] = [];
    let added: number[] = [];
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
      const seen = await model.call(tag);
      if (!measured || !seen) return;
      receive.push(seen.requestAt - sentAt);
      answer.push(ackedAt - seen.answerAt);
      added.push(seen.requestAt - sentAt + (ackedAt - seen.answerAt));
    };
    // Tags of their own: the model remembers every round's by tag, ours' among them.
    const base = CONTACTS * 1_000_000;
    log(`bare bot: warm-up ${WARMUP} rounds`);
    for (let i = 0; i < WARMUP; i++) await oneRound(base + i, false);
    const results: BareBotRate[] = [];
    // Up the rates, each with its own warm-up at the rate, until one is not sustained.
    for (const [step, rate] of rates.entries()) {
      receive = [];
      answer = [];
      added = [];
      const total = Math.round(rate * SECONDS);
      const tags = base + (step + 1) * 10_000_000;
      if (WARMUP_SECONDS > 0) await atRate(Math.round(rate * WARMUP_SECONDS), rate, (i) => oneRound(tags + i, false));
      log(`bare bot: measuring ${total} rounds at ${rate}/s`);
      const [bot0, sim0, model0] = await Promise.all([ask<LoadMark>(child, 'measure'), sim.load(), model.load()]);
      const t0 = performance.now();
      const failure = await atRate(total, rate, (i) => oneRound(tags + 5_000_000 + i, true)).then(
        () => undefined,
        (error: unknown) => String((error as Error)?.message ?? error),
      );
      const seconds = (performance.now() - t0) / 1000;
      const [bot1, sim1, model1] = await Promise.all([ask<LoadMark>(child, 'measure'), sim.load(), model.load()]);
      const botLoad = loadBetween(bot0, bot1);
      const simLoad = sim0 && sim1 ? loadBetween(sim0, sim1) : undefined;
      const measured = {
        rate,
        roundsPerSecond: round1(total / seconds),
        cpuMsPerRound: {
          bot: round1(botLoad.cpuMs / total),
          simulator: simLoad ? round1(simLoad.cpuMs / total) : undefined,
          model: round1(loadBetween(model0, model1).cpuMs / total),
        },
        eventLoopUtilization: { bot: round2(botLoad.eventLoopUtilization), simulator: simLoad ? round2(simLoad.eventLoopUtilization) : undefined },
        receiveToModelMs: stats(receive),
        answerToAckMs: stats(answer),
        addedMs: stats(added),
        ...(failure ? { failure } : {}),
      };
      const sustained = sustains(rate, measured);
      results.push({ ...measured, sustained });
      log(`bare bot at ${rate}/s: ${measured.roundsPerSecond} rounds/s, added p99 ${measured.addedMs.p99Ms} ms${sustained ? '' : ', not sustained'}`);
      if (!sustained) break;
    }
    return results;
  } finally {
    await stopChild(child);
  }
}

/** The bare bot's child process: one Baileys socket with in-memory auth, answering every contact's text through the model. */
export function bareBotChild(): void {
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
