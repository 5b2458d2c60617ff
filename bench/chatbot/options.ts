/** bench/chatbot's role, flags and small helpers (main.ts's header lists the flags). */
import pino, { type Logger } from 'pino';
import { DB_PROXY_ROLE, dbRttMs } from '../support/db-latency';

export type Role = 'bench' | 'sim-child' | 'worker-child' | 'bare-bot-child' | 'model-child' | typeof DB_PROXY_ROLE;
export const ROLE: Role =
  (['sim-child', 'worker-child', 'bare-bot-child', 'model-child', DB_PROXY_ROLE] as const).find((role) => role === process.argv[2]) ?? 'bench';
export const args = new Map<string, string>();
for (let i = ROLE === 'bench' ? 2 : 3; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ''), process.argv[i + 1]);
/**
 * The rates measured, ascending (`--rates 10,20,30`; `--rate 50` for one): each side goes up them until it
 * no longer sustains one (sustains()); the goal is judged at the highest rate both sustain (issue #38).
 */
export const RATES = (args.get('rates') ?? args.get('rate') ?? '10,20,30,40,50,60')
  .split(',')
  .map(Number)
  .filter((rate) => Number.isFinite(rate) && rate > 0)
  .sort((a, b) => a - b);
if (RATES.length === 0) {
  process.stderr.write('--rates is a comma-separated list of rounds per second (--rate one of them)\n');
  process.exit(2);
}
/** The highest rate asked for (the bare model loop's). */
export const RATE = RATES[RATES.length - 1];
/** Added p99 beyond which a rate is not sustained even when every round was answered: the rounds queued. */
export const SUSTAINED_P99_MS = 1_000;
/**
 * Whether a side sustained `rate`: every round answered, at 95 % of the rate or more, and its added p99
 * under SUSTAINED_P99_MS (a side that keeps pace only by queueing does not sustain it).
 */
export function sustains(rate: number, measured: { roundsPerSecond: number; addedMs: Stats; failure?: string }): boolean {
  return !measured.failure && measured.roundsPerSecond >= 0.95 * rate && measured.addedMs.p99Ms <= SUSTAINED_P99_MS;
}
/** Ours may add at most this much to the bare bot's p99 at the highest rate both sustain (issue #38). */
export const GOAL_MARGIN_MS = 20;
export const SECONDS = Number(args.get('seconds') ?? 10);
export const CONTACTS = Number(args.get('contacts') ?? 50);
/** Warm-up rounds, one per contact first (Signal sessions set up), not measured. */
export const WARMUP = Number(args.get('warmup') ?? CONTACTS);
/** Each chat's stored messages before the measured rounds, as a live table holds (bench/support's seedHistory; 0: none). */
export const HISTORY = Number(args.get('history') ?? 100);
/**
 * Then this many seconds of rounds at the measured rate, not measured, as in a gateway that has been
 * running at that rate. Without it the first half second of every run held a burst of slow rounds
 * (added 50–100 ms), and the run's p99 mostly measured that burst. What warms up is not pinned down:
 * not the pools (7–8 connections before measuring, 8–10 after), so likely code and plans first run
 * with rounds overlapping (the contact warm-up runs one round at a time).
 */
export const WARMUP_SECONDS = Number(args.get('warmup-seconds') ?? 1);
export const SIM_MODE = args.get('sim') ?? 'process';
/**
 * `--bare-bot 0` skips the bare Baileys bot (on by default): before ours, a bare Baileys script answers
 * the same contacts through the same model at the same rate (bareBot()).
 */
export const BARE_BOT = args.get('bare-bot') !== '0';
/** `--db-rtt-ms N`: ours (the worker, the follower and the runner) reach Postgres N ms of round trip away (bench/support/db-latency.ts). */
export const DB_RTT_MS = ROLE === 'bench' ? dbRttMs(args) : 0;
export const TOPOLOGY = args.get('topology') ?? 'split';
/** `--window-prof <dir>`: V8 CPU profiles of the bench's process and the worker's over the measured rounds only. */
export const WINDOW_PROF = args.get('window-prof');
/**
 * `--busy-cluster 1`: during the measured rounds another connection of the server holds a transaction
 * with an id 1 s of every 1.5 s (a report, an operator's open psql, another service's long write), as
 * the consumers of the outbox meet on a shared server (docs/adr/0020).
 */
export const BUSY_CLUSTER = args.get('busy-cluster') === '1';
if (TOPOLOGY !== 'split' && TOPOLOGY !== 'single') {
  process.stderr.write(`--topology is split or single, not "${TOPOLOGY}"\n`);
  process.exit(2);
}
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const SIM_OPTIONS = { logLevel: 'silent', initialPrekeyCount: 2000, media: false } as const;
export const OWNER = '5533000000001';
/** The bare bot's own number: the contacts write to it as to ours, with Signal sessions of their own. */
export const BARE_OWNER = '5533000000002';
export const contactPhone = (index: number) => `5534${String(index).padStart(9, '0')}`;
export const log = (line: string) => process.stderr.write(`[chatbot] ${line}\n`);
export const round1 = (value: number) => Math.round(value * 10) / 10;
export const round2 = (value: number) => Math.round(value * 100) / 100;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Stats {
  n: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

export function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => round1(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
  return { n: sorted.length, p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), maxMs: round1(sorted[sorted.length - 1] ?? NaN) };
}

export const benchLogger = (): Logger => pino({ level: process.env.BENCH_LOG_LEVEL ?? 'silent' }, pino.destination(2));
