/**
 * bench/chaos (issue 34, "Measured"): nothing lost, never twice, never stuck, every inbound message
 * stored, while the simulator plays WhatsApp's failure modes. N instances carry traffic both ways —
 * sync and async `POST /send/text`, a campaign (`/sender/advanced`) each, and messages their peers'
 * phones send them (`POST /sim/accounts/{phone}/send`) — while each mode of the table (CHAOS_MODES in
 * libs/testing/src/chaos.ts: how it is injected, cleared, and what recovery means) is injected in turn,
 * then all at once; then the reconnect storm: `--storm-instances` more instances on the same worker,
 * the server restarted under all of them, and again during the recovery.
 *
 *   npm run bench -- chaos [--instances 20] [--storm-instances 1000] [--modes a,b,…] [--interval 1000]
 *                          [--campaign 3] [--settle 90000] [--log error] [--sequential 0] [--all-at-once 0]
 *   npm run bench -- chaos --merge part1.json,part2.json,…   (a run in parts: one overall `met`)
 *
 * Processes: the simulator, the gateway (HTTP), one session worker, the dispatcher (async queue and
 * campaign scheduler), each its own, over real NATS (a subject prefix per run) and Postgres (a schema
 * per run); the orchestrator drives the traffic and reads the ledger. Every send carries a unique
 * text; at the end the phones' inboxes and the `messages` table are read: accepted (200 or queued)
 * and never at the phone nor Failed with a reason is lost; a text at a phone twice is duplicated;
 * Pending/Queued after the settle time is stuck. Recovery: from the fault's end to each affected
 * instance's first successful sync send. Goals: 0 lost, 0 duplicated, 0 stuck, 100 % of inbound
 * stored (content or placeholder), recovery p99 ≤ 30 s per mode and ≤ 60 s for the storm.
 */
import { mergeParts } from './merge';
import { args, role, type Setup } from './options';
import { orchestrate } from './orchestrate';
import { runDispatcher, runGateway, runSim, runWorker } from './roles';

async function main(): Promise<void> {
  if (args.has('merge')) return mergeParts((args.get('merge') as string).split(','));
  const setup = args.has('setup') ? (JSON.parse(args.get('setup') as string) as Setup) : undefined;
  if (role === 'sim') return runSim();
  if (role === 'gateway') return runGateway(setup as Setup);
  if (role === 'worker') return runWorker(setup as Setup);
  if (role === 'dispatcher') return runDispatcher(setup as Setup);
  await orchestrate();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
