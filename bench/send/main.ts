/**
 * bench/send: synchronous text sends through the whole stack. `POST /send/text` over HTTP (keep-alive)
 * → gateway → bus → session worker → Baileys → the simulator's server ack, for M connected instances,
 * next to a bare script calling Baileys `sendMessage` on M sockets (in-memory auth) against the same
 * simulator, each awaited until the server's `<ack class="message">` too. Same N, same concurrency,
 * same (instance, peer) pairs; the sides run one after the other so they don't compete for the cores.
 *
 *   npm run bench -- send [--n 2000] [--concurrency 50] [--instances 50] [--peers 10] [--warmup 1] [--history 100] [--settle 1000]
 *                         [--pool 20] [--topology split|single] [--workers 1] [--db-rtt-ms 0] [--floor 1] [--otlp 0] [--repeat 1]
 *                         [--window-prof <dir>] [--window-allocations <dir>]
 *
 * Processes: the simulator (load mode), the bare side, the ours side and the orchestrator, which drives
 * the HTTP load for ours (a client of its own, as in production). `--topology split` (default) is the
 * deployed one: the gateway HTTP app in one process and the session worker in a child process of its
 * own (as apps/gateway and apps/session-worker), over real NATS (NATS_URL, default nats://127.0.0.1:4222;
 * every subject under a prefix of the run's own, the server may be shared) and one Postgres schema, each
 * process with a pool of `--pool` connections. `--topology single` hosts both in one process over the
 * in-process bus, sharing one pool (the embedded `npm start`; what every run recorded before this flag measured).
 * Before measuring, each side sends `--warmup` rounds of one message per instance (device lookup and
 * Signal session set-up with its peer), not counted. Then ours' tables get a live deployment's size: each
 * chat `--history` stored messages (copies of its oldest, older; `--history 0`: none), and every table is
 * analyzed (bench/support's seedHistory, analyzeSchema), so the measured sends run the plans a deployment's
 * statistics give, not a warm-up's. Then `--settle` sends at the full concurrency, not measured either (the
 * ANALYZE makes every connection plan its statements afresh; a deployment's steady state does not).
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
 * Prints one JSON object on stdout (progress on stderr), with `topology`. Goal (issue #38, `goal`, `met`):
 * ours' machine CPU per send ≤ 1.15 × the floor's in the same run (`floorRatio`; `met` null with `--floor 0`).
 * `ratio` is ours' throughput over bare's (the first goal was ≥ 0.8, out of reach on 2 cores: docs/bench/send.md).
 * `--repeat K` runs all of it K times and prints each run's key figures and their medians, the goal judged
 * on the median (bench/send/repeat.ts). Next to throughput, each side reports its CPU time per send (`cpuMsPerSend`, `cpuRatio`;
 * ours per process in `cpuMsPerSendByProcess` and their sum in `cpuMsPerSend`), steadier than throughput
 * on a shared machine, and ours the SQL statements per send, summed over its processes (`sqlPerSend`;
 * per process in `sqlPerSendByProcess`), with the most frequent ones. Each side's main-thread GC pauses
 * per send (part of its CPU): `bare.gcMsPerSend`, `ours.gcMsPerSendByProcess`. `SEND_WORKER_NODE_FLAGS`
 * passes Node/V8 flags to ours' session worker processes only (split topology; e.g. a GC setting to try).
 */
import { DB_PROXY_ROLE, serveDbProxyChild } from '../support/db-latency';
import { runBare, runSim } from './bare';
import { runHopHttp, runHopNats } from './floor';
import { args, REPEAT, role, send, type SimInfo } from './options';
import { orchestrate } from './orchestrate';
import { runRepeated } from './repeat';
import { startTracingFromEnv } from './otlp';
import { runOurs, runWorker } from './ours';

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
  if (REPEAT > 1) await runRepeated();
  else await orchestrate();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
