/** Ours: the gateway HTTP app's process and (split) the session worker's, measured while the orchestrator drives the HTTP load. */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import type { Bus } from '@gw/bus';
import type { DataSource } from 'typeorm';
import {
  ask,
  countStatements,
  loadBetween,
  loadMark,
  type LoadMark,
  PrefixedBus,
  serveWorkerChild,
  startSessionWorker,
  stopChild,
  UNCOUNTED,
  type WorkerSetup,
} from '../support/processes';
import { provisionDevices } from '../support/sim-clients';
import {
  INSTANCES,
  log,
  NATS_URL,
  POOL,
  round,
  send,
  type SimInfo,
  sleep,
  TOPOLOGY,
  WINDOW_ALLOCATIONS,
  WINDOW_PROF,
  windowAllocations,
  windowProfile,
  WORKER_INDEX,
  workerName,
  WORKERS,
} from './options';

export interface OursReady {
  baseUrl: string;
  tokens: string[];
  connected: number;
  connectSeconds: number;
  /** The Postgres schema of the run (the orchestrator analyzes it after the warm-up). */
  schema: string;
}

/** What one of ours' processes measured, from the orchestrator's ready until every send's event was written. */
export interface ProcessMeasure {
  cpuMs: number;
  eventLoopUtilization: number;
  /** The main thread's GC pauses (ms). */
  gcMs: number;
  /** MB allocated on its JS heap. */
  allocatedMb: number;
  queries: number;
  poolWaitingAvg: number;
}

/** What ours answers when the orchestrator says it is done: both processes summed, and each. */
export interface OursMeasured {
  eventsWritten: number;
  eventsDrainSeconds: number;
  queries: number;
  cpuMs: number;
  poolWaitingAvg: number;
  byProcess: Record<string, ProcessMeasure>;
  failedStatements: Record<string, number>;
  top: Array<[string, number]>;
}

/** Counts the process's SQL until `stop()`; auth key reads by key type (Baileys asks for some types on every send). */
const countSendStatements = () =>
  countStatements({
    // Wide enough to tell the single fenced statements apart (their lease CTE alone is ~140 characters).
    width: 200,
    // A prepared statement's call is one config object ({ name, text, values }), a plain one (text, values).
    key: (text, call) =>
      text.includes('SELECT key_id') ? `${text} [${String(((call[0] as { values?: unknown[] })?.values ?? (call[1] as unknown[]))?.[1])}]` : text,
    failures: true,
  });

/** Statements waiting for a pooled connection, sampled every 50 ms: a saturated pool shows up here, not in CPU. */
function samplePoolWaiting(dataSource: DataSource): { stop(): number } {
  const pool = (dataSource.driver as unknown as { master: { waitingCount: number } }).master;
  const waiting: number[] = [];
  const sampler = setInterval(() => waiting.push(pool.waitingCount), 50);
  return {
    stop: () => {
      clearInterval(sampler);
      return waiting.length ? round(waiting.reduce((a, b) => a + b, 0) / waiting.length) : 0;
    },
  };
}

const addTo = (into: Map<string, number>, entries: Iterable<[string, number]>) => {
  for (const [key, n] of entries) into.set(key, (into.get(key) ?? 0) + n);
};

export async function runOurs(sim: SimInfo, databaseUrl: string): Promise<void> {
  const { openDatabase } = await import('@gw/persistence');
  const { InProcessBus, NatsBus } = await import('@gw/bus');
  const { EnvReader } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/http-app');
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dataSource = await openDatabase({ url: databaseUrl, schema, poolSize: POOL });
  const workerProcesses: ChildProcess[] = [];
  try {
    const devices = await provisionDevices(sim, INSTANCES, '5532');
    const tokens: string[] = [];
    // Instances that are paired and want a session: exactly what a worker adopts after a failover.
    for (const [index, device] of devices.entries()) {
      const id = `rbench${String(index).padStart(8, '0')}`;
      const token = `tok-${id}`;
      await dataSource.query(`INSERT INTO instances (id, token, name, desired_state, paired, owner) VALUES ($1, $2, $3, 'connected', true, $4)`, [
        id,
        token,
        `bench-${index}`,
        device.phone,
      ]);
      await dataSource.query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, [id, JSON.stringify(device.creds)]);
      tokens.push(token);
    }
    // split: the worker's process and the gateway's share only NATS (under the run's prefix) and Postgres.
    const prefix = `${schema}.`;
    const bus: Bus = TOPOLOGY === 'split' ? new PrefixedBus(await NatsBus.connect(NATS_URL, 'bench-send-gateway'), prefix) : new InProcessBus();
    const logger = pino({ level: 'silent' });
    // --instances 1 puts every send on one token: the limiter still runs, but never refuses.
    const config = loadGatewayConfig(
      new EnvReader({ DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'silent', RPC_TIMEOUT_MS: '30000', RATE_LIMIT_INSTANCE: '1000000/s' }),
      [],
    );
    const app = await createHttpApp({ config, dataSource, bus, logger });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.getHttpServer().address() as { port: number };
    const started = Date.now();
    let worker: { stop(): Promise<void> } | undefined;
    if (TOPOLOGY === 'split') {
      // Their stdout is not ours: libsignal prints there. Each CPU profile (--cpu-prof) is a file of its own.
      for (let index = 0; index < WORKERS; index++) {
        const execArgv = [
          ...process.execArgv.map((flag) => (flag.startsWith('--cpu-prof-name=') ? `--cpu-prof-name=${workerName(index)}.cpuprofile` : flag)),
          // SEND_WORKER_NODE_FLAGS: Node/V8 flags for the session workers only (e.g. GC settings).
          ...(process.env.SEND_WORKER_NODE_FLAGS ?? '').split(' ').filter(Boolean),
        ];
        const passed = [
          '--instances',
          String(INSTANCES),
          '--pool',
          String(POOL),
          '--workers',
          String(WORKERS),
          '--worker-index',
          String(index),
          ...(WINDOW_PROF ? ['--window-prof', WINDOW_PROF] : []),
          ...(WINDOW_ALLOCATIONS ? ['--window-allocations', WINDOW_ALLOCATIONS] : []),
        ];
        workerProcesses.push(fork(process.argv[1], ['worker', ...passed], { execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
      }
      await Promise.all(workerProcesses.map((child) => ask(child, 'start', { setup: { databaseUrl, schema, prefix, sim } satisfies WorkerSetup }, 60_000)));
    } else {
      worker = await startSessionWorker(dataSource, bus, sim, logger, { workerId: 'bench-worker', capacity: INSTANCES });
    }
    let connected = 0;
    const deadline = Date.now() + 300_000;
    while (Date.now() < deadline) {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`SELECT count(*)::int AS n FROM instances WHERE status = 'connected'`);
      connected = n;
      if (connected >= INSTANCES) break;
      await sleep(250);
    }
    const connectSeconds = (Date.now() - started) / 1000;
    log(`${connected}/${INSTANCES} instances connected in ${connectSeconds} s (${TOPOLOGY})`);
    await sleep(2000);
    // Count the SQL the sends cost, in this process and the worker's.
    const counter = await countSendStatements();
    // The orchestrator says how many sends it made; their `messages` events are the last writes of the path.
    const stopped = new Promise<number>((resolve) => process.once('message', (message) => resolve(Number((message as { sends?: number }).sends) || 0)));
    const workersFrom = await Promise.all(workerProcesses.map((child) => ask<LoadMark>(child, 'measure')));
    if (WINDOW_PROF) await windowProfile.start();
    if (WINDOW_ALLOCATIONS) await windowAllocations.start();
    const from = loadMark();
    const poolWaiting = samplePoolWaiting(dataSource);
    send({ baseUrl: `http://127.0.0.1:${address.port}`, tokens, connected, connectSeconds, schema } satisfies OursReady);
    const sends = await stopped;
    if (WINDOW_PROF) await windowProfile.stop(`${WINDOW_PROF}/${workerProcesses.length ? 'gateway' : 'gateway+worker'}.window.cpuprofile`);
    if (WINDOW_ALLOCATIONS) await windowAllocations.stop(`${WINDOW_ALLOCATIONS}/${workerProcesses.length ? 'gateway' : 'gateway+worker'}.window.heapprofile`);
    // Work the path deferred counts too: wait (up to 60 s) until every send's `messages` event is in
    // the outbox, and report how long after the last answer that took.
    const drainStarted = Date.now();
    let events = 0;
    while (Date.now() - drainStarted < 60_000) {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`${UNCOUNTED} SELECT count(*)::int AS n FROM outbox_events WHERE event_type = 'messages'`);
      events = n;
      if (events >= sends) break;
      await sleep(20);
    }
    const eventsDrainSeconds = round((Date.now() - drainStarted) / 1000, 2);
    const statements = counter.stop();
    const failed = counter.failed();
    const load = loadBetween(from, loadMark());
    const byProcess: Record<string, ProcessMeasure> = {
      [workerProcesses.length ? 'gateway' : 'gateway+worker']: {
        cpuMs: load.cpuMs,
        eventLoopUtilization: round(load.eventLoopUtilization, 2),
        gcMs: load.gcMs,
        allocatedMb: load.allocatedMb,
        queries: [...statements.values()].reduce((a, b) => a + b, 0),
        poolWaitingAvg: poolWaiting.stop(),
      },
    };
    for (const [index, child] of workerProcesses.entries()) {
      const measured = await ask<LoadMark & { statements: Array<[string, number]>; failed: Array<[string, number]>; poolWaitingAvg: number }>(
        child,
        'measured',
      );
      const workerLoad = loadBetween(workersFrom[index], measured);
      byProcess[workerName(index)] = {
        cpuMs: workerLoad.cpuMs,
        eventLoopUtilization: round(workerLoad.eventLoopUtilization, 2),
        gcMs: workerLoad.gcMs,
        allocatedMb: workerLoad.allocatedMb,
        queries: measured.statements.reduce((a, [, n]) => a + n, 0),
        poolWaitingAvg: measured.poolWaitingAvg,
      };
      addTo(statements, measured.statements);
      addTo(failed, measured.failed);
    }
    const processes = Object.values(byProcess);
    send({
      eventsWritten: events,
      eventsDrainSeconds,
      queries: processes.reduce((a, p) => a + p.queries, 0),
      cpuMs: processes.reduce((a, p) => a + p.cpuMs, 0),
      poolWaitingAvg: round(processes.reduce((a, p) => a + p.poolWaitingAvg, 0)),
      byProcess,
      failedStatements: Object.fromEntries(failed),
      top: [...statements.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40),
    } satisfies OursMeasured);
    await app.close();
    await Promise.all(workerProcesses.map((child) => stopChild(child)));
    await worker?.stop();
    await bus.close();
  } finally {
    // The worker's process first: the schema goes with its tables.
    await Promise.all(workerProcesses.map((child) => stopChild(child).catch(() => undefined)));
    await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await dataSource.destroy();
  }
}

/**
 * The worker's process (split): the session worker as apps/session-worker runs it; it counts its
 * statements and marks its load when the gateway's process asks.
 */
export function runWorker(): void {
  let counter: Awaited<ReturnType<typeof countSendStatements>> | undefined;
  let poolWaiting: { stop(): number } | undefined;
  serveWorkerChild({
    natsName: 'bench-send-worker',
    poolSize: POOL,
    logger: pino({ level: 'silent' }),
    worker: { workerId: WORKERS === 1 ? 'bench-worker' : `bench-worker-${WORKER_INDEX + 1}`, capacity: Math.ceil(INSTANCES / WORKERS) },
    measure: async (dataSource) => {
      if (WINDOW_PROF) await windowProfile.start();
      if (WINDOW_ALLOCATIONS) await windowAllocations.start();
      counter = await countSendStatements();
      poolWaiting = samplePoolWaiting(dataSource);
      return loadMark();
    },
    measured: async () => {
      if (WINDOW_PROF) await windowProfile.stop(`${WINDOW_PROF}/${workerName(WORKER_INDEX)}.window.cpuprofile`);
      if (WINDOW_ALLOCATIONS) await windowAllocations.stop(`${WINDOW_ALLOCATIONS}/${workerName(WORKER_INDEX)}.window.heapprofile`);
      return {
        ...loadMark(),
        statements: [...(counter?.stop() ?? new Map<string, number>()).entries()],
        failed: [...(counter?.failed() ?? new Map<string, number>()).entries()],
        poolWaitingAvg: poolWaiting?.stop() ?? 0,
      };
    },
  });
}
