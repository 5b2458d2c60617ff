/** bench/cluster's flags, faults and small helpers (main.ts's header lists the flags). */
import { resolve } from 'node:path';

type FaultName = 'nats' | 'pg' | 'rolling' | 'worker';

export const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
/**
 * `--victim-instances N`: the first N instances are placed on worker-1 alone (the other workers are stopped
 * until it holds them all, and every worker gets the capacity for them), so that the `worker` fault kills a
 * worker holding N (issue #39: "kill -9 of a session worker with 1,000 instances"). 0: the usual placement.
 * The workers run without the rebalance then (`WORKER_REBALANCE=false` unless the environment sets it): worker-1
 * would otherwise hand the others their share of its instances as soon as they start (ADR 0043).
 */
export const VICTIM_INSTANCES = Number(args.get('victim-instances') ?? 0);
export const INSTANCES = Number(args.get('instances') ?? (VICTIM_INSTANCES || 200));
export const INTERVAL_MS = Number(args.get('interval') ?? 1_000);
/**
 * With rounds further apart than this, an instance's next round may come long after the fault, so each
 * affected instance is probed with a sync send right after the kill and then this often until one answers 200
 * (its recovery is not inflated by the interval).
 */
export const PROBE_EVERY_MS = 2_000;
/**
 * `--watched N`: N of the instances, spread evenly over them, also send a sync text every WATCH_EVERY_MS
 * through every phase (no inbound or async part). With many instances and rounds far apart (issue #39's
 * "a few hundred instances" at a load the machine carries, e.g. `--instances 300 --interval 30000`), an
 * instance's few sends rarely fall in its hand-over, so its longest wait says little of the gap; the
 * watched ones sample it as densely as `--interval 1000` does, and the rolling restart is judged on them
 * (the figure over every moved instance is printed beside it). Their sends load the machine as rounds
 * do: keep them and the rounds under what it carries. 0 (the default): every instance is judged.
 */
export const WATCHED = Math.max(0, Number(args.get('watched') ?? 0));
export const WATCH_EVERY_MS = 1_000;
export const SETTLE_MS = Number(args.get('settle') ?? 60_000);
/**
 * `--steady <ms>`: how long each phase's traffic runs before its fault. The phase's JSON says what the traffic cost
 * the machine and how long sync sends waited then (`steady`), with no fault yet: a recovery figure is judged
 * against it (a saturated machine's sends are slow before anything fails). At least 30 s gives the rolling
 * restart's statistic (the longest wait within 30 s) a steady counterpart of the same length.
 */
export const STEADY_MS = Math.max(3_000, Number(args.get('steady') ?? 5_000));
export const FAULTS = (args.get('faults') ?? 'nats,pg,rolling,worker').split(',') as FaultName[];
export const REPO = resolve(__dirname, '../../..');
export const RUN_DIR = resolve(REPO, args.get('dir') ?? '.cluster-bench');
export const BASE_PORT = Number(args.get('base-port') ?? 25_000);
export const DIST = resolve(REPO, args.get('dist') ?? 'dist');
/** Every service's DATABASE_POOL_SIZE (their default, 10, when not given): a worker taking over hundreds of sessions queues on its pool. */
export const DB_POOL = args.get('db-pool') ? Number(args.get('db-pool')) : undefined;
/** NODE_OPTIONS of every service (e.g. `--cpu-prof --cpu-prof-dir=<dir>`: a profile per process, written when it exits). */
export const NODE_OPTIONS = args.get('node-options');
/** The workers' LEASE_TTL_MS (their default when not given); the gateways then follow a takeover this long plus 10 s. */
export const LEASE_TTL_MS = args.get('lease-ttl') ? Number(args.get('lease-ttl')) : undefined;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const log = (line: string) => process.stderr.write(`[cluster-bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
export const seconds = (ms: number) => Math.round(ms / 10) / 100;

export interface Instance {
  id: string;
  token: string;
  phone: string;
  peer: string;
}

/** A percentile of values in ms, in seconds (null when none). */
export function percentileS(values: number[], p: number): number | null {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  return seconds(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);
}
