/** The traffic both ways during a fault, and each instance's recovery from it. */
import type { ChaosInbound, ChaosSend } from '@gw/testing';
import { simControl } from '../support/sim-clients';
import { apiClient, type Query } from './clients';
import { type Instance, INTERVAL_MS, percentileS, PROBE_EVERY_MS, seconds, sleep, WATCH_EVERY_MS } from './options';

let textSeq = 0;
const uniqueText = (phase: string, instance: string, kind: string) =>
  `chaos ${phase} ${instance} ${kind} ${++textSeq}-${Math.random().toString(36).slice(2, 8)}`;

interface Traffic {
  sends: ChaosSend[];
  inbound: ChaosInbound[];
  rerouted: number;
  stop(): Promise<void>;
  /**
   * A sync send for each instance now, then every PROBE_EVERY_MS until one answers 200 (or the traffic
   * stops): recorded as the rounds' sends are, so that they count in the tally and in `recoveries`.
   */
  probe(instances: Instance[]): Promise<void>;
}

export function startTraffic(
  phase: string,
  instances: Instance[],
  api: ReturnType<typeof apiClient>,
  sim: { controlUrl: string },
  watched: ReadonlySet<string> = new Set(),
): Traffic {
  const traffic: Traffic = { sends: [], inbound: [], rerouted: 0, stop: async () => undefined, probe: async () => undefined };
  let running = true;
  const record = async (instance: Instance, kind: 'sync' | 'async', text: string) => {
    const startedAt = Date.now();
    const answer = await api('POST', '/send/text', { token: instance.token }, { number: instance.peer, text, ...(kind === 'async' ? { async: true } : {}) });
    if (answer.rerouted) traffic.rerouted++;
    traffic.sends.push({
      mode: phase,
      instance: instance.id,
      kind,
      to: instance.peer,
      newChat: false,
      text,
      status: answer.status,
      startedAt,
      endedAt: Date.now(),
      ...(answer.status === 200 ? {} : { error: String(answer.body?.error ?? JSON.stringify(answer.body)).slice(0, 160) }),
    });
    return answer.status;
  };
  // `step` every `everyMs` (from one start to the next) while the traffic runs, until it says it is done.
  const paced = async (everyMs: number, step: () => Promise<boolean>) => {
    while (running) {
      const started = Date.now();
      if (await step()) return;
      await sleep(Math.max(0, everyMs - (Date.now() - started)));
    }
  };
  const round = async (instance: Instance) => {
    const inboundText = uniqueText(phase, instance.id, 'inbound');
    const inbound = simControl<{ id: string }>(sim, 'POST', `/sim/accounts/${instance.peer}/send`, { to: instance.phone, text: inboundText }).then(
      ({ id }) => traffic.inbound.push({ mode: phase, instance: instance.id, from: instance.peer, text: inboundText, id }),
      (error: unknown) => traffic.inbound.push({ mode: phase, instance: instance.id, from: instance.peer, text: inboundText, error: String(error) }),
    );
    const asyncSend = record(instance, 'async', uniqueText(phase, instance.id, 'async'));
    await record(instance, 'sync', uniqueText(phase, instance.id, 'sync'));
    await Promise.all([inbound, asyncSend]);
    return false;
  };
  // Spread over the interval, so the rounds do not all start together.
  const loops = instances.map(async (instance, i) => {
    await sleep((i * INTERVAL_MS) / instances.length);
    await paced(INTERVAL_MS, () => round(instance));
  });
  // A watched instance's sync send every WATCH_EVERY_MS besides its rounds (options.ts, `--watched`).
  const watchers = instances.filter((instance) => watched.has(instance.id));
  for (const [i, instance] of watchers.entries())
    loops.push(
      sleep((i * WATCH_EVERY_MS) / watchers.length).then(() =>
        paced(WATCH_EVERY_MS, async () => {
          await record(instance, 'sync', uniqueText(phase, instance.id, 'watch'));
          return false;
        }),
      ),
    );
  const probes: Promise<void>[] = [];
  traffic.probe = (targets: Instance[]) => {
    const probing = Promise.all(
      targets.map((instance) => paced(PROBE_EVERY_MS, async () => (await record(instance, 'sync', uniqueText(phase, instance.id, 'probe'))) === 200)),
    ).then(() => undefined);
    probes.push(probing);
    return probing;
  };
  traffic.stop = async () => {
    running = false;
    await Promise.all([...loops, ...probes]);
  };
  return traffic;
}

/** Per instance: ms from `from(instance)` to the end of its first sync send started after it that answered 200 (NaN: none). */
export function recoveries(traffic: Traffic, instances: string[], from: (instance: string) => number): number[] {
  return instances.map((instance) => {
    const since = from(instance);
    const first = traffic.sends
      .filter((s) => s.instance === instance && s.kind === 'sync' && s.status === 200 && s.startedAt >= since)
      .sort((a, b) => a.endedAt - b.endedAt)[0];
    return first ? first.endedAt - since : NaN;
  });
}

/**
 * Per instance, the longest any sync send started in one of its windows `[at, at + windowMs)` waited
 * for its answer (NaN when no sync send started in any of them): how long a client found the instance
 * unable to send. A rolling restart's hand-over is judged by it — the holder keeps serving while it
 * drains, so "the first send after the SIGTERM" would be answered by the old holder and say nothing.
 */
export function longestWaits(traffic: Traffic, instances: string[], windows: (instance: string) => number[], windowMs: number): number[] {
  return instances.map((instance) => {
    const starts = windows(instance);
    const waits = traffic.sends
      .filter((s) => s.instance === instance && s.kind === 'sync' && starts.some((at) => s.startedAt >= at && s.startedAt < at + windowMs))
      .map((s) => s.endedAt - s.startedAt);
    return waits.length ? Math.max(...waits) : NaN;
  });
}

/** The services' database's counters: commits (pg_stat_database), and statements and plans (pg_stat_statements, null without it). */
export interface DatabaseMark {
  commits: number;
  statements: number | null;
  plans: number | null;
  /** pg_stat_statements by statement (its queryid): the text's start, calls, and planning plus execution ms. */
  byStatement?: Map<string, { text: string; calls: number; ms: number }>;
}

/** How much of a statement's text names it in `topStatements`. */
const STATEMENT_TEXT = 60;

export async function databaseMark(query: Query): Promise<DatabaseMark | null> {
  try {
    const [row] = await query<{ commits: string; statements: string | null; plans: string | null }>(
      `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::text AS commits,
         (SELECT sum(calls) FROM pg_stat_statements)::text AS statements, (SELECT sum(plans) FROM pg_stat_statements)::text AS plans`,
    ).catch(() =>
      query<{ commits: string; statements: null; plans: null }>(
        `SELECT xact_commit::text AS commits, NULL AS statements, NULL AS plans FROM pg_stat_database WHERE datname = current_database()`,
      ),
    );
    const byStatement = new Map<string, { text: string; calls: number; ms: number }>();
    if (row.statements !== null) {
      const statements = await query<{ id: string; text: string; calls: string; ms: number }>(
        `SELECT queryid::text AS id, regexp_replace(left(query, 200), '\\s+', ' ', 'g') AS text, calls::text,
           total_plan_time + total_exec_time AS ms FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      ).catch(() => []);
      for (const s of statements) byStatement.set(s.id, { text: s.text.slice(0, STATEMENT_TEXT), calls: Number(s.calls), ms: Number(s.ms) });
    }
    return {
      commits: Number(row.commits),
      statements: row.statements === null ? null : Number(row.statements),
      plans: row.plans === null ? null : Number(row.plans),
      byStatement,
    };
  } catch {
    return null;
  }
}

/** What the database did between two marks (null where either mark lacks it). */
export function databaseBetween(from: DatabaseMark | null, to: DatabaseMark | null): DatabaseMark | null {
  if (!from || !to) return null;
  const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  const byStatement = new Map<string, { text: string; calls: number; ms: number }>();
  for (const [id, after] of to.byStatement ?? []) {
    const before = from.byStatement?.get(id);
    const calls = after.calls - (before?.calls ?? 0);
    if (calls > 0) byStatement.set(id, { text: after.text, calls, ms: after.ms - (before?.ms ?? 0) });
  }
  return { commits: to.commits - from.commits, statements: diff(from.statements, to.statements), plans: diff(from.plans, to.plans), byStatement };
}

/** The statements called most per round (`count` of them): each one's text, calls and Postgres ms (planning and execution) per round. */
export function topStatements(database: DatabaseMark, rounds: number, count = 15): Array<{ text: string; calls: number; ms: number }> {
  const round = (value: number, places: number) => Math.round((value / rounds) * 10 ** places) / 10 ** places;
  return [...(database.byStatement?.values() ?? [])]
    .sort((a, b) => b.calls - a.calls)
    .slice(0, count)
    .map((s) => ({ text: s.text, calls: round(s.calls, 2), ms: round(s.ms, 3) }));
}

/** The rolling restart's windows: a sync send started within this long of a SIGTERM of its instance's holder. */
export const WAIT_WINDOW_MS = 30_000;

/**
 * The traffic before a phase's fault (`--steady`, from `from` to `to`): the share of the machine's cores busy,
 * the sync sends' waits and, as the rolling restart counts its recovery, each instance's longest sync send
 * within one window (`longestWait`: from the first full round on, WAIT_WINDOW_MS or what the steady time
 * leaves), p50/p99 over the instances. What the machine does with no fault: a recovery is judged against it.
 */
export function steadyState(
  traffic: Traffic,
  from: number,
  to: number,
  cpu: { busyPercent: number; cpuUsPerOpBy: Array<[string, number]> } | null,
  database: DatabaseMark | null = null,
): {
  seconds: number;
  busyPercent: number | null;
  cpuMsPerRoundBy: Record<string, number> | null;
  databasePerRound: {
    commits: number;
    statements: number | null;
    plans: number | null;
    top: Array<{ text: string; calls: number; ms: number }> | null;
  } | null;
  syncSends: number;
  waitP50S: number | null;
  waitP99S: number | null;
  longestWait: { windowS: number; p50S: number | null; p99S: number | null };
} {
  // The first round of every instance starts within one interval of the traffic's start (spread over it).
  const windowFrom = Math.min(from + INTERVAL_MS, to);
  const windowMs = Math.min(WAIT_WINDOW_MS, to - windowFrom);
  const sync = traffic.sends.filter((s) => s.kind === 'sync' && s.startedAt >= from && s.startedAt < to);
  const waits = sync.map((s) => s.endedAt - s.startedAt);
  const longest = new Map<string, number>();
  for (const s of sync)
    if (s.startedAt >= windowFrom && s.startedAt < windowFrom + windowMs)
      longest.set(s.instance, Math.max(longest.get(s.instance) ?? 0, s.endedAt - s.startedAt));
  // A round is an inbound message, an async and a sync send: the machine's CPU per round (`cpu` is the window's
  // total in µs), by process as bench/support names them, the ten largest.
  const rounds = Math.max(1, sync.length);
  const perRound = (count: number) => Math.round((count / rounds) * 10) / 10;
  const cpuMsPerRoundBy = cpu
    ? Object.fromEntries(
        cpu.cpuUsPerOpBy
          .slice(0, 10)
          .filter(([, us]) => us > 0)
          .map(([name, us]) => [name, Math.round(us / rounds / 10) / 100]),
      )
    : null;
  return {
    seconds: seconds(to - from),
    busyPercent: cpu ? Math.round(cpu.busyPercent) : null,
    cpuMsPerRoundBy,
    // The services' commits, statements and plans per round (the bench's own few reads included).
    databasePerRound: database
      ? {
          commits: perRound(database.commits),
          statements: database.statements === null ? null : perRound(database.statements),
          plans: database.plans === null ? null : perRound(database.plans),
          top: database.byStatement?.size ? topStatements(database, rounds) : null,
        }
      : null,
    syncSends: sync.length,
    waitP50S: percentileS(waits, 50),
    waitP99S: percentileS(waits, 99),
    longestWait: { windowS: seconds(windowMs), p50S: percentileS([...longest.values()], 50), p99S: percentileS([...longest.values()], 99) },
  };
}

/**
 * The `count` longest sync sends started in one of their instance's windows (as longestWaits): which instance,
 * how long, and when each started after the latest of its windows' starts (the SIGTERM of its holder) — where
 * to look in the services' logs for a slow hand-over.
 */
export function slowestWaits(
  traffic: Traffic,
  instances: string[],
  windows: (instance: string) => number[],
  windowMs: number,
  count = 5,
): Array<{ instance: string; waitS: number; startedAfterSigtermS: number; status: number }> {
  const wanted = new Set(instances);
  return traffic.sends
    .flatMap((s) => {
      if (!wanted.has(s.instance) || s.kind !== 'sync') return [];
      const at = windows(s.instance).filter((start) => s.startedAt >= start && s.startedAt < start + windowMs);
      return at.length ? [{ send: s, since: Math.max(...at) }] : [];
    })
    .sort((a, b) => b.send.endedAt - b.send.startedAt - (a.send.endedAt - a.send.startedAt))
    .slice(0, count)
    .map(({ send, since }) => ({
      instance: send.instance,
      waitS: Math.round(send.endedAt - send.startedAt) / 1000,
      startedAfterSigtermS: Math.round(send.startedAt - since) / 1000,
      status: send.status,
    }));
}

export async function waitRecovered(traffic: Traffic, instances: string[], from: (instance: string) => number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (recoveries(traffic, instances, from).every((ms) => !Number.isNaN(ms))) return;
    await sleep(250);
  }
}
