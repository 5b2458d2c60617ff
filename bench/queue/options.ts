/** bench/queue's role, flags and small helpers (main.ts's header lists the flags). */
export type Role = 'orchestrate' | 'sim' | 'bare' | 'ours';

/** The simulator as the children are told it (the shared shape of bench/support). */
export type { SimInfo } from '../support/receivers';

export interface LoadResult {
  ok: number;
  failed: number;
  firstError?: string;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
export const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
export const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
const num = (name: string, fallback: number) => Number(args.get(name) ?? fallback);
export const N = num('n', 100_000);
export const INSTANCES = num('instances', 1_000);
export const CONCURRENCY = num('concurrency', 64);
export const CANCEL = num('cancel', 10_000);
export const DRAIN = num('drain', 3_000);
export const DRAIN_INSTANCES = num('drain-instances', 50);
export const PACE_INSTANCES = num('pace-instances', 5);
export const PACE_SENDS = num('pace-sends', 21);
export const PACE_GAP_S = num('pace-gap', 1);
export const BARE = num('bare', 1);
export const PEER = '5511999990000';
/** `--cpu-prof <dir>`: a V8 CPU profile of ours (the gateway, later with worker and dispatcher) written there. */
export const CPU_PROF = args.get('cpu-prof');
/** `--only enqueue`: stop after the enqueue phase (profiling the accept path). */
export const ONLY = args.get('only');

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const log = (line: string) => process.stderr.write(`[queue:${role}] ${line}\n`);
export const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
export const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0);
export const send = (message: unknown) => process.send?.(message);
