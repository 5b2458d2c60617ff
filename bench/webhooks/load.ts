/** How the load is made and measured on both sides: CPU used, events paced at a rate, requests in flight. */
import { subscribe } from 'node:diagnostics_channel';
import { readdirSync, readFileSync } from 'node:fs';
import { round, sleep } from './options';

/** CPU time (user + system) this process used so far: a measure the machine's load does not inflate. */
export function cpuMs(): number {
  const usage = process.cpuUsage();
  return Math.round((usage.user + usage.system) / 1000);
}

/**
 * CPU time (user + system, ms) all of this machine's `postgres` processes used so far, read from /proc: the
 * database's share of a phase when Postgres runs here (null elsewhere, or when /proc cannot be read). A
 * backend that ended between two readings takes its time with it: read around a phase whose connections stay open.
 */
export function postgresCpuMs(): number | null {
  try {
    let ticks = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue;
      }
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      if (stat.slice(open + 1, close) !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    // USER_HZ is 100 on Linux.
    return ticks * 10;
  } catch {
    return null;
  }
}

/** CPU time since `since` (a cpuUsage reading), in ms: all of it, and the kernel's part (the sockets' writes and reads). */
export function cpuMsSince(since: NodeJS.CpuUsage): { total: number; system: number } {
  const usage = process.cpuUsage(since);
  return { total: Math.round((usage.user + usage.system) / 1000), system: Math.round(usage.system / 1000) };
}

/** Calls `emit(from, to)` every few ms with the events due by then, `rate` per second for `seconds`. */
export async function paced(rate: number, seconds: number, emit: (from: number, to: number) => void | Promise<void>): Promise<void> {
  const total = Math.round(rate * seconds);
  const started = Date.now();
  let produced = 0;
  while (produced < total) {
    const due = Math.min(total, Math.floor(((Date.now() - started) * rate) / 1000));
    if (due > produced) {
      const from = produced;
      produced = due;
      await emit(from, due);
    }
    await sleep(5);
  }
}

export interface InFlightStats {
  mean: number;
  shareAtLimit: number;
  requests: number;
  /** From start() to the first request (ms). */
  firstRequestMs: number;
}

/**
 * Requests in flight over time, from undici's diagnostics channels (created → response headers, or
 * an error): its time-weighted mean and the share of the time at `limit` or more, from `start()` to
 * the last request's end. Tells whether a client keeps its concurrency busy: the relay and the bare
 * client measure it the same way, at the same small cost. An answer that arrived while the process was
 * busy counts as in flight until it is read, so a busy client looks fuller than it is.
 */
export function inFlightMeter(limit: number): { start: () => void; read: () => InFlightStats } {
  let inFlight = 0;
  let active = false;
  let startedAt = 0;
  let lastAt = 0;
  let lastEndAt = 0;
  let area = 0;
  let atLimit = 0;
  let requests = 0;
  let firstAt = 0;
  const tick = () => {
    const now = performance.now();
    if (active) {
      area += (now - lastAt) * inFlight;
      if (inFlight >= limit) atLimit += now - lastAt;
    }
    lastAt = now;
  };
  subscribe('undici:request:create', () => {
    tick();
    inFlight++;
    if (active && requests++ === 0) firstAt = lastAt;
  });
  const end = () => {
    tick();
    inFlight = Math.max(0, inFlight - 1);
    lastEndAt = lastAt;
  };
  subscribe('undici:request:headers', end);
  subscribe('undici:request:error', end);
  return {
    start: () => {
      tick();
      active = true;
      startedAt = lastAt;
      area = 0;
      atLimit = 0;
      requests = 0;
    },
    read: () => {
      const span = Math.max(lastEndAt - startedAt, 0.001);
      return { mean: round(area / span, 2), shareAtLimit: round(atLimit / span, 3), requests, firstRequestMs: round(firstAt - startedAt) };
    },
  };
}
