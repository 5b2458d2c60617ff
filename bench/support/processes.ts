/**
 * What bench/chatbot and bench/send need to measure our side across processes: a subject prefix over the
 * apps' bus (the NATS server may be shared), the SQL statements a process issues, its CPU and event-loop
 * load, asking a child process for them over IPC, and stopping it.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { Bus, type BusHandler, type BusSubscription, type RequestOptions, type SubscribeOptions } from '@gw/bus';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';

/**
 * The apps' bus with every subject under `prefix` (one token and a dot): a run's session worker and
 * chatbot see only each other, not the placements, wake-ups and outbox notices of other runs or tests
 * on the same NATS server. Handlers get the subject without the prefix, as on an unshared server.
 */
export class PrefixedBus extends Bus {
  constructor(
    private readonly inner: Bus,
    private readonly prefix: string,
  ) {
    super();
  }

  request<T>(subject: string, data: unknown, options: RequestOptions): Promise<T> {
    return this.inner.request<T>(this.prefix + subject, data, options);
  }

  publish(subject: string, data: unknown): void {
    this.inner.publish(this.prefix + subject, data);
  }

  subscribe(subject: string, handler: BusHandler, options?: SubscribeOptions): BusSubscription {
    return this.inner.subscribe(this.prefix + subject, (data, full) => handler(data, full.slice(this.prefix.length)), options);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A statement of the bench's own that the counts leave out (it starts with this). */
export const UNCOUNTED = '/* bench, uncounted */';

/** How `countStatements` keys a statement (its defaults are bench/chatbot's). */
export interface CountOptions {
  /** Characters of the normalised text kept in the key (120). */
  width?: number;
  /** Refines the key with the call (e.g. a parameter that tells statements of one text apart). */
  key?: (text: string, call: unknown[]) => string;
  /** Also counts the statements whose promise rejects, by SQLSTATE (`failed()`). */
  failures?: boolean;
}

/**
 * Counts this process's SQL statements by text until `stop()` (pg's Client.query sees every statement
 * TypeORM issues, prepared ones included). Literals are blanked so that one statement is one key.
 */
export async function countStatements(options: CountOptions = {}): Promise<{ stop(): Map<string, number>; failed(): Map<string, number> }> {
  const pg = await import('pg');
  const statements = new Map<string, number>();
  const failed = new Map<string, number>();
  const normalised = new Map<string, string>();
  const clientPrototype = (pg.default?.Client ?? pg.Client).prototype as unknown as { query: (...call: unknown[]) => unknown };
  const originalQuery = clientPrototype.query;
  let counting = true;
  clientPrototype.query = function (this: unknown, ...call: unknown[]) {
    if (!counting) return originalQuery.apply(this, call);
    const first = call[0] as string | { text?: string };
    const raw = typeof first === 'string' ? first : (first?.text ?? '?');
    if (raw.startsWith(UNCOUNTED)) return originalQuery.apply(this, call);
    // The counter runs inside the measured processes: normalise each distinct text once, not per call
    // (the regexes over a long statement cost more CPU than pg's own work on it).
    let text = normalised.get(raw);
    if (text === undefined) {
      text = raw
        .replace(/\s+/g, ' ')
        .replace(/'[^']*'/g, "'…'")
        .slice(0, options.width ?? 120);
      if (normalised.size < 10_000) normalised.set(raw, text);
    }
    const key = options.key ? options.key(text, call) : text;
    statements.set(key, (statements.get(key) ?? 0) + 1);
    const result = originalQuery.apply(this, call) as unknown;
    // A deadlock between group commits, say, shows here as 40P01.
    if (options.failures && result instanceof Promise)
      result.catch((error: { code?: string }) => failed.set(error?.code ?? '?', (failed.get(error?.code ?? '?') ?? 0) + 1));
    return result;
  };
  return {
    stop: () => {
      counting = false;
      clientPrototype.query = originalQuery;
      return statements;
    },
    failed: () => failed,
  };
}

/**
 * Bytes this process has allocated on its JavaScript heap so far (V8's count, every object whatever became of it;
 * Node 22+, which the benches run on; 0 where absent). Unlike CPU time it does not move with the machine's load: a
 * change that allocates less per message shows in it even when the runs' rates are too noisy to tell.
 */
const allocatedBytes = (): number => (v8.getHeapStatistics() as { total_allocated_bytes?: number }).total_allocated_bytes ?? 0;

/** A process's CPU (µs, user + system) and event-loop time (ms, active and idle) so far; two of them give the load in between. */
export interface LoadMark {
  cpuMicros: number;
  loopActiveMs: number;
  loopIdleMs: number;
  /** The main thread's GC pauses so far (ms), counted from the process's first mark on. */
  gcMs: number;
  /** Bytes allocated on the JS heap so far (allocatedBytes: steady where CPU time is not). */
  allocatedBytes: number;
}

/** The process's GC pauses (PerformanceObserver `gc` entries), summed from the first loadMark on. */
let gcPausedMs = 0;
let gcObserver: PerformanceObserver | undefined;

export function loadMark(): LoadMark {
  if (!gcObserver) {
    gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcPausedMs += entry.duration;
    });
    gcObserver.observe({ entryTypes: ['gc'] });
  }
  const cpu = process.cpuUsage();
  const loop = performance.eventLoopUtilization();
  return { cpuMicros: cpu.user + cpu.system, loopActiveMs: loop.active, loopIdleMs: loop.idle, gcMs: gcPausedMs, allocatedBytes: allocatedBytes() };
}

/** Between two marks: CPU in ms, the share of the time the event loop was busy (0–1), the GC pauses in ms and the MB allocated. */
export function loadBetween(from: LoadMark, to: LoadMark): { cpuMs: number; eventLoopUtilization: number; gcMs: number; allocatedMb: number } {
  const active = to.loopActiveMs - from.loopActiveMs;
  const idle = to.loopIdleMs - from.loopIdleMs;
  return {
    cpuMs: (to.cpuMicros - from.cpuMicros) / 1000,
    eventLoopUtilization: active + idle > 0 ? active / (active + idle) : NaN,
    gcMs: to.gcMs - from.gcMs,
    allocatedMb: (to.allocatedBytes - from.allocatedBytes) / 1e6,
  };
}

/** One question to a child over IPC and its answer (the child answers `{ id, ...answer }` to `{ id, type, ...data }`). */
let asked = 0;
export function ask<T>(child: ChildProcess, type: string, data: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<T> {
  const id = ++asked;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`the child did not answer "${type}" in ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: { id?: number; error?: string }) => {
      if (message?.id !== id) return;
      if (message.error !== undefined) done(new Error(`the child failed "${type}": ${message.error}`));
      else done(undefined, message as T);
    };
    const onExit = (code: number | null) => done(new Error(`the child exited (${code}) before answering "${type}"`));
    const done = (error?: Error, answer?: T) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(answer as T);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send({ id, type, ...data });
  });
}

/** The child's side of `ask`: answers each question of a known type with what `answer` returns for it. */
export function answerQuestions(answers: Record<string, (data: Record<string, unknown>) => unknown>): void {
  process.on('message', (message: { id?: number; type?: string }) => {
    const answer = message?.type ? answers[message.type] : undefined;
    if (message?.id === undefined || !answer) return;
    void Promise.resolve()
      .then(() => answer(message as Record<string, unknown>))
      .then(
        (value) => process.send?.({ ...(value as object), id: message.id }),
        (error: unknown) => process.send?.({ id: message.id, error: String((error as Error)?.stack ?? error) }),
      );
  });
}

/** Disconnects a child (it then stops by itself) and waits for it to exit; kills it if it has not in 30 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

/** What the worker's child is told at `start` (`--topology split`). */
export interface WorkerSetup {
  databaseUrl: string;
  schema: string;
  /** The run's NATS subject prefix (the parent's bus has the same). */
  prefix: string;
  sim: { websocketUrl: string; rootPublicKey: string };
}

/** The session worker as both topologies of bench/chatbot and bench/send run it: Baileys against the simulator. */
export async function startSessionWorker(
  dataSource: DataSource,
  bus: Bus,
  sim: WorkerSetup['sim'],
  logger: Logger,
  options: { workerId: string; capacity?: number },
): Promise<{ stop(): Promise<void> }> {
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const worker = new SessionWorker({
    dataSource,
    bus,
    logger,
    config: sessionWorkerConfig({
      ...options,
      // The inbound bounds as apps/session-worker reads them (INBOUND_QUEUE_MAX, INBOUND_WORKER_QUEUE_MAX), when set.
      ...(process.env.INBOUND_QUEUE_MAX ? { inboundQueueMax: Number(process.env.INBOUND_QUEUE_MAX) } : {}),
      ...(process.env.INBOUND_WORKER_QUEUE_MAX ? { inboundWorkerQueueMax: Number(process.env.INBOUND_WORKER_QUEUE_MAX) } : {}),
      simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
    }),
  });
  await worker.start();
  return worker;
}

/**
 * The worker child's side of `--topology split`: at `start`, the session worker on its own DataSource (the
 * run's schema) and its own NATS connection under the run's prefix, as apps/session-worker runs it;
 * `measure` and `measured` answer the parent (given the child's DataSource); when the parent disconnects it
 * stops gracefully (and exits 1 if that takes over 25 s).
 */
export function serveWorkerChild(options: {
  natsName: string;
  poolSize: number;
  logger: Logger;
  worker: { workerId: string; capacity?: number };
  measure: (dataSource: DataSource) => unknown;
  measured: () => unknown;
}): void {
  let stop: () => Promise<void> = async () => undefined;
  let dataSource: DataSource | undefined;
  answerQuestions({
    start: async (message) => {
      const { openDatabase } = await import('@gw/persistence');
      const { NatsBus } = await import('@gw/bus');
      const setup = message.setup as WorkerSetup;
      const opened = await openDatabase({ url: setup.databaseUrl, schema: setup.schema, poolSize: options.poolSize });
      dataSource = opened;
      const bus = new PrefixedBus(await NatsBus.connect(process.env.NATS_URL ?? 'nats://127.0.0.1:4222', options.natsName), setup.prefix);
      const worker = await startSessionWorker(opened, bus, setup.sim, options.logger, options.worker);
      stop = async () => {
        await worker.stop();
        await bus.close();
        await opened.destroy();
      };
      return {};
    },
    measure: () => options.measure(dataSource as DataSource),
    measured: () => options.measured(),
  });
  process.once('disconnect', () => {
    setTimeout(() => process.exit(1), 25_000).unref();
    void stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

type InspectorPost = (method: string, params?: object) => Promise<unknown>;

/**
 * A window of this process seen through the inspector (no restart, no flag): `begin` starts what it
 * records, `end` stops it and answers the profile, which `stop(file)` writes (its directory made if missing).
 */
function inspectorWindow(
  begin: (post: InspectorPost) => Promise<void>,
  end: (post: InspectorPost) => Promise<unknown>,
): { start(): Promise<void>; stop(file: string): Promise<void> } {
  let session: import('node:inspector').Session | undefined;
  const post: InspectorPost = (method, params) =>
    new Promise<unknown>((resolve, reject) => session?.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))));
  return {
    async start(): Promise<void> {
      const { Session } = await import('node:inspector');
      session = new Session();
      session.connect();
      await begin(post);
    },
    async stop(file: string): Promise<void> {
      const profile = await end(post);
      const { mkdirSync, writeFileSync } = await import('node:fs');
      const { dirname } = await import('node:path');
      // The directory given to --window-prof (or the like) need not exist yet.
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      session?.disconnect();
    },
  };
}

/**
 * A V8 CPU profile of this process between `start()` and `stop(file)`: a bench profiles only its measured
 * window, not start-up and connecting.
 */
export function windowProfiler(): { start(): Promise<void>; stop(file: string): Promise<void> } {
  return inspectorWindow(
    async (post) => {
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 500 });
      await post('Profiler.start');
    },
    async (post) => ((await post('Profiler.stop')) as { profile: unknown }).profile,
  );
}

/**
 * What this process allocates between `start()` and `stop(file)`, by stack: V8's sampling heap profiler
 * (one sample every 32 KB allocated on average), counting objects the scavenger and the full GC collected
 * too, so the total is everything allocated, not what stayed. `stop` writes the `.heapprofile` (Chrome
 * DevTools' format: each node's `selfSize` is bytes allocated there).
 */
export function allocationSampler(): { start(): Promise<void>; stop(file: string): Promise<void> } {
  return inspectorWindow(
    async (post) => {
      await post('HeapProfiler.startSampling', { samplingInterval: 32_768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    },
    async (post) => ((await post('HeapProfiler.stopSampling')) as { profile: unknown }).profile,
  );
}

/** Busy and total jiffies of all cores so far (/proc/stat's first line), or null off Linux. */
function machineJiffies(): { busy: number; total: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = fields[3] + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/**
 * CPU ticks (user + system, 10 ms each) of every process now, summed by what the process is: its command
 * name, for a bench's own process (`…/bench/<name>/main.js [role]`) its role (`orchestrate` without one), for a
 * service run from its build its app's name (`session-worker`, `gateway`…; the simulator's server `sim`).
 */
function cpuTicksByProcess(): Map<string, number> {
  const ticks = new Map<string, number>();
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return ticks;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      const used = Number(fields[11]) + Number(fields[12]);
      if (!used) continue;
      let label = stat.slice(stat.indexOf('(') + 1, close);
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const script = argv.findIndex((arg) => /bench\/[^/]+\/main\.js$/.test(arg));
      if (script >= 0) label = argv[script + 1] && !argv[script + 1].startsWith('--') ? argv[script + 1] : 'orchestrate';
      else {
        // A service run from its build (bench/cluster: `dist/apps/<app>/main.js`, the simulator's `server.js`): its name.
        const app = argv.map((arg) => /\/apps\/([^/]+)\/main\.js$/.exec(arg)?.[1] ?? (/\/wa-sim\/server\.js$/.test(arg) ? 'sim' : null)).find(Boolean);
        if (app) label = app;
      }
      ticks.set(label, (ticks.get(label) ?? 0) + used);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks;
}

/** The machine's CPU so far, all cores and per process (machineCpuBetween). */
export interface MachineCpuMark {
  jiffies: { busy: number; total: number } | null;
  byProcess: Map<string, number>;
}

export function machineCpuMark(): MachineCpuMark {
  return { jiffies: machineJiffies(), byProcess: cpuTicksByProcess() };
}

/**
 * The machine's CPU between two marks per operation, in µs (USER_HZ is 100 on Linux: a jiffy is 10 ms of one
 * core), unrounded: all of it, the share of the cores busy (%), and per process (largest first). Null off Linux.
 */
export function machineCpuBetween(
  from: MachineCpuMark,
  to: MachineCpuMark,
  operations: number,
): { cpuUsPerOp: number; busyPercent: number; cpuUsPerOpBy: Array<[string, number]> } | null {
  if (!from.jiffies || !to.jiffies) return null;
  const per = (jiffies: number) => (jiffies * 10_000) / Math.max(1, operations);
  const byProcess: Array<[string, number]> = [];
  for (const [label, after] of to.byProcess) byProcess.push([label, per(after - (from.byProcess.get(label) ?? 0))]);
  return {
    cpuUsPerOp: per(to.jiffies.busy - from.jiffies.busy),
    busyPercent: (100 * (to.jiffies.busy - from.jiffies.busy)) / Math.max(1, to.jiffies.total - from.jiffies.total),
    cpuUsPerOpBy: byProcess.sort((a, b) => b[1] - a[1]),
  };
}
