/**
 * bench/chatbot: chatbot rounds through the whole stack, next to a bare loop calling the same loopback
 * model directly. A contact's message (simulator phone → WhatsApp → Baileys → the worker's store and
 * outbox) → the chatbot's outbox follower (a round row) → a runner (claim, context, model call through
 * the AI SDK) → the loopback model, which answers at once → the answer through the worker's send op
 * until WhatsApp's server acked it. Contacts send at a fixed rate (each its own chat).
 *
 *   npm run bench -- chatbot [--rates 10,20,30,40,50,60 | --rate 50] [--seconds 10] [--contacts 50] [--warmup <contacts>] [--warmup-seconds 1]
 *                            [--sim process|inline] [--topology split|single] [--busy-cluster 1] [--db-rtt-ms 0] [--bare-bot 1]
 *                            [--repeat K (the whole bench K times, each in a process of its own; the goal judged on medians: repeat.ts)]
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
 * joins the chat's round still gathering and is measured with it (`joinedMessages` counts them).
 * Prints one JSON object on stdout (progress on stderr), ending with `goal` and `met`.
 *
 * Rates (issue #38): each side goes up `--rates`, each rate with its own warm-up, until it no longer
 * sustains one (every round answered, ≥ 95 % of the rate, added p99 ≤ 1 s); ours goes no higher than the
 * bare bot sustained. Goal: at the highest rate both sustain (`goalRate`), ours' added p99 ≤ the bare
 * bot's + 20 ms. `ours` and `bare.bot` are each side at that rate; `byRate` lists every rate measured.
 *
 * Before ours, `bare.bot` (`--bare-bot 0` skips it): a bare Baileys script as the bot on a number of its
 * own, answering the same contacts through the same model at the same rate, measured the same way
 * (receive → model request, model answer → server ack; its CPU and the simulator's per round). No store,
 * no queue, no second process: the floor of any bot's round on this machine (bareBot()).
 */
import { DB_PROXY_ROLE, serveDbProxyChild } from '../support/db-latency';
import { bareBotChild } from './bare-bot';
import { modelChild } from './model';
import { args, type Role, ROLE } from './options';
import { REPEAT, runRepeated } from './repeat';
import { runBench } from './run';
import { simChild } from './simulator';
import { workerChild } from './worker-child';

const roles: Record<Role, () => Promise<void>> = {
  bench: () => (REPEAT > 0 ? runRepeated() : runBench()).then(() => process.exit(0)),
  'sim-child': simChild,
  'worker-child': workerChild,
  'bare-bot-child': async () => bareBotChild(),
  'model-child': modelChild,
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
