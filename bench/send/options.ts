/** bench/send's role, flags, result shapes and small helpers (main.ts's header lists the flags). */
import { allocationSampler, windowProfiler } from '../support/processes';
import { DB_PROXY_ROLE, dbRttMs } from '../support/db-latency';

export type Role = 'orchestrate' | 'sim' | 'bare' | 'ours' | 'worker' | 'hop-http' | 'hop-nats' | typeof DB_PROXY_ROLE;

/** The simulator as the children are told it (the shared shape of bench/support). */
export type { SimInfo } from '../support/receivers';

export interface LoadResult {
  sent: number;
  failed: number;
  firstError?: string;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /**
   * CPU time of the whole machine (every process: this stack, the simulator, Postgres, the HTTP
   * client; /proc/stat) per send during the measured sends, and how busy the cores were. On a 2-core
   * machine where everything shares the cores, throughput is bounded by cores ÷ this.
   */
  machineCpuMsPerSend?: number;
  machineBusyPercent?: number;
  /**
   * machineCpuMsPerSend split by process (/proc/<pid>/stat): this bench's roles by name (sim, bare,
   * ours, worker…, orchestrate: the HTTP client), every other program by its command name (postgres,
   * nats-server…); what is left is the kernel's own work and processes that ended during the sends.
   */
  machineCpuMsPerSendBy?: Record<string, number>;
}

export interface SideResult extends LoadResult {
  connected: number;
  connectSeconds: number;
  /**
   * CPU time of the side's process (user + system) per send, warm-up included: what a send costs,
   * which a noisy machine disturbs far less than throughput. Ours is the gateway's process and the
   * worker's summed (split), or the one process hosting both (single); its HTTP client is the
   * orchestrator, not counted, nor is the simulator on either side.
   */
  cpuMsPerSend?: number;
  /** The main thread's GC pauses per send (bare: its one process). */
  gcMsPerSend?: number;
  /** KB allocated on the JS heap per send (bare's process). */
  allocatedKbPerSend?: number;
}

const roleGiven = process.argv[2] !== undefined && !process.argv[2].startsWith('--');
export const role = (roleGiven ? process.argv[2] : 'orchestrate') as Role;
export const args = new Map<string, string>();
for (let i = roleGiven ? 3 : 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
export const N = Number(args.get('n') ?? 2000);
export const CONCURRENCY = Number(args.get('concurrency') ?? 50);
export const INSTANCES = Number(args.get('instances') ?? 50);
export const PEERS = Number(args.get('peers') ?? 10);
export const WARMUP = Number(args.get('warmup') ?? 1);
/**
 * `--settle N`: sends after the warm-up and the ANALYZE, at the full concurrency, not measured: the ANALYZE
 * makes every connection plan its prepared statements afresh (five custom plans and a generic one each), a
 * deployment's steady state does not (docs/bench/send.md, 2026-12-05). Both sides run them.
 */
export const SETTLE = Number(args.get('settle') ?? 1000);
/** `--history N`: each chat's stored messages before the measured sends (a live table's size; bench/support's seedHistory). */
export const HISTORY = Number(args.get('history') ?? 100);
/** Postgres connections of each of ours' processes (single: the gateway and the worker share one pool). */
export const POOL = Number(args.get('pool') ?? 20);
export const TOPOLOGY = args.get('topology') ?? 'split';
/** `--db-rtt-ms N`: ours reaches Postgres N ms of round trip away (a proxy; bench/support/db-latency.ts). */
export const DB_RTT_MS = dbRttMs(args);
if (TOPOLOGY !== 'split' && TOPOLOGY !== 'single') {
  process.stderr.write(`--topology is split or single, not "${TOPOLOGY}"\n`);
  process.exit(2);
}
/**
 * `--workers N` (split only): N session-worker processes side by side, as N replicas of apps/session-worker
 * on one machine; each takes at most ⌈instances ÷ N⌉ leases, so the instances spread over them.
 */
export const WORKERS = Number(args.get('workers') ?? 1);
if (!Number.isInteger(WORKERS) || WORKERS < 1 || (WORKERS > 1 && TOPOLOGY !== 'split')) {
  process.stderr.write(`--workers is a whole number ≥ 1, above 1 only with --topology split\n`);
  process.exit(2);
}
/** The worker child's index among --workers (its lease holder id and profile name). */
export const WORKER_INDEX = Number(args.get('worker-index') ?? 0);
export const workerName = (index: number) => (WORKERS === 1 ? 'worker' : `worker${index + 1}`);
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const PEER_PREFIX = '5539';
/** `--cpu-prof <dir>`: write a V8 CPU profile of each child process there (to see what limits throughput). */
export const CPU_PROF = args.get('cpu-prof');
/** `--window-prof <dir>`: a V8 CPU profile of each worker and of the bare side over the sends only (no start-up, no connect). */
export const WINDOW_PROF = args.get('window-prof');
/**
 * `--window-allocations <dir>`: a sampling heap profile of each worker and of the bare side over the sends only
 * (`<name>.window.heapprofile`, collected objects counted: what a send allocates, by stack).
 */
export const WINDOW_ALLOCATIONS = args.get('window-allocations');
/** `--floor 0` skips the floor under ours (runFloor(); on by default). */
export const FLOOR = args.get('floor') !== '0';
/**
 * `--repeat K`: the whole run (simulator, bare, ours, floor) K times, one after the other, each in a process of
 * its own; prints each run's key figures and their median (bench/send/repeat.ts). The machine's speed drifts
 * between the sides of one run; the median of several judges the goal more steadily than one run.
 */
export const REPEAT = Number(args.get('repeat') ?? 1);
if (!Number.isInteger(REPEAT) || REPEAT < 1) {
  process.stderr.write(`--repeat is a whole number ≥ 1\n`);
  process.exit(2);
}
/** Issue #38's goal: ours' machine CPU per send at most this many times the floor's, in the same run. */
export const FLOOR_RATIO_GOAL = 1.15;
/** `--otlp 1`: ours with tracing on, exporting to a loopback collector (off by default: the cost of tracing off is what runs measure). */
export const OTLP = args.get('otlp') === '1';

/** The CPU profile of this process over the measured sends (`--window-prof`). */
export const windowProfile = windowProfiler();
/** What this process allocates over the measured sends (`--window-allocations`). */
export const windowAllocations = allocationSampler();

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const log = (line: string) => process.stderr.write(`[send:${role}] ${line}\n`);
export const peerPhone = (index: number) => `${PEER_PREFIX}${String(index % PEERS).padStart(6, '0')}`;
export const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

export function send(message: unknown): void {
  process.send?.(message);
}
