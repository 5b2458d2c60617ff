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
import { args, role, type SimInfo } from './options';
import { orchestrate } from './orchestrate';
import { runBare, runOurs, runSim } from './sides';

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
