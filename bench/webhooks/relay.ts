/** The relay's process: the webhook relay as its service runs it, with its SQL traced and its requests in flight metered. */
import { send } from './ipc';
import { cpuMs, cpuMsSince, inFlightMeter } from './load';
import { args, databaseUrl, num } from './options';

export async function runRelay(): Promise<void> {
  const { DeliveryRepository, InstanceRepository, openDatabase, WebhookRepository } = await import('@gw/persistence');
  const { InProcessBus } = await import('@gw/bus');
  const { Subjects } = await import('@gw/contracts');
  const { createLogger, SsrfGuard } = await import('@gw/platform');
  const { WebhookRelay, WEBHOOK_RELAY_DEFAULTS } = await import('@gw/relay');
  const config = {
    ...WEBHOOK_RELAY_DEFAULTS,
    batchSize: num('batch', WEBHOOK_RELAY_DEFAULTS.batchSize),
    laneRunLength: num('run', WEBHOOK_RELAY_DEFAULTS.laneRunLength),
    maxInFlightPerReceiver: num('inflight', WEBHOOK_RELAY_DEFAULTS.maxInFlightPerReceiver),
    pollIntervalMs: num('poll', WEBHOOK_RELAY_DEFAULTS.pollIntervalMs),
    passGapMs: num('gap', WEBHOOK_RELAY_DEFAULTS.passGapMs),
    publicBaseUrl: 'http://gateway.bench',
    includeToken: false,
    retryScheduleMs: [1_000, 5_000, 30_000],
    ssrf: SsrfGuard.fromList('127.0.0.0/8'),
  };
  const poolSize = num('pool', 0) || config.maxInFlightPerReceiver + 4;
  const dataSource = await openDatabase({ url: databaseUrl, schema: args.get('schema') as string, poolSize, keepConnections: num('warm', 1) === 1 });
  const trace = traceQueries(dataSource);
  const inFlight = inFlightMeter(config.maxInFlightPerReceiver);
  const bus = new InProcessBus();
  let readyCpu = process.cpuUsage();
  // Stands in for NATS: the feeder's OutboxNotice arrives over IPC and is published on the local bus.
  process.on('message', (message: { wake?: string; cmd?: string; id?: number }) => {
    if (message.wake) bus.publish(Subjects.outbox(message.wake), { instanceId: message.wake, lastId: '0' });
    if (message.cmd === 'steady') {
      trace.timeline.mark(Date.now());
      send({ id: message.id });
    }
    if (message.cmd === 'mark') {
      trace.timeline.mark(0);
      inFlight.start();
      send({ id: message.id });
    }
    if (message.cmd === 'stop') {
      void (async () => {
        await relay.stop();
        const counts: Array<{ status: string; n: number }> = await dataSource.query(
          `SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`,
        );
        await bus.close();
        await dataSource.destroy();
        send({
          id: message.id,
          deliveries: Object.fromEntries(counts.map((row) => [row.status, row.n])),
          queries: trace.queries(),
          cold: trace.cold(),
          timeline: trace.timeline.read(),
          inFlight: inFlight.read(),
          cpuMs: cpuMs(),
          cpuAfterStart: cpuMsSince(readyCpu),
        });
        process.exit(0);
      })();
    }
  });
  const relay = new WebhookRelay(
    new DeliveryRepository(dataSource),
    new WebhookRepository(dataSource),
    new InstanceRepository(dataSource),
    bus,
    config,
    createLogger('bench-relay', 'warn'),
  );
  // What the service does before it reports ready (WebhookRelayModule): a cold pool delayed the first second.
  const warmStarted = performance.now();
  if (num('warm', 1)) await relay.warmUp();
  const warmUpMs = Math.round(performance.now() - warmStarted);
  relay.start();
  trace.ready();
  // From here on: the relay's work, without loading its modules and warming up (which the bare client has little of).
  readyCpu = process.cpuUsage();
  send({
    ready: true,
    settings: {
      batchSize: config.batchSize,
      laneRunLength: config.laneRunLength,
      maxInFlightPerReceiver: config.maxInFlightPerReceiver,
      pollIntervalMs: config.pollIntervalMs,
      passGapMs: config.passGapMs,
      claimMs: config.claimMs,
      requestTimeoutMs: config.requestTimeoutMs,
      poolSize,
      warmUpMs,
    },
  });
}

/** What the relay's pool did once it said it was ready: connections opened, statements run first on their connection. */
export interface ColdStats {
  /** Connections the pool opened after the relay said it was ready (each plans its statements afresh). */
  connectionsOpened: number;
  /** Statements that were the first of their kind (or its EXPLAIN, warmUp's) on their connection, and their wait. */
  coldStatements: number;
  coldStatementMs: number;
}

/**
 * Counts the relay's SQL statements by kind (their first words) and the time spent waiting for them,
 * wrapping the query runner every DataSource query and transaction goes through; and, once `ready()`
 * is called, what ran cold (ColdStats): what a loaded machine inflates in time but not in count.
 */
function traceQueries(dataSource: import('typeorm').DataSource): {
  queries: () => Record<string, { count: number; ms: number; empty: number }>;
  ready: () => void;
  /** From `at` on: each statement kind's count, mean and max wait and rows, per second for the first 3 s and after. */
  timeline: { mark: (at: number) => void; read: () => Record<string, Record<string, { n: number; meanMs: number; maxMs: number; rows: number }>> };
  cold: () => ColdStats;
} {
  const stats = new Map<string, { count: number; ms: number; empty: number }>();
  const seen = new WeakMap<object, Set<string>>();
  const cold: ColdStats = { connectionsOpened: 0, coldStatements: 0, coldStatementMs: 0 };
  let ready = false;
  let markedAt = 0;
  const buckets = new Map<string, Map<string, { n: number; ms: number; maxMs: number; rows: number }>>();
  const pool = (dataSource.driver as unknown as { master: { on(event: 'connect', listener: () => void): void } }).master;
  pool.on('connect', () => void (ready && cold.connectionsOpened++));
  const runner = dataSource.createQueryRunner();
  const proto = Object.getPrototypeOf(runner) as { query: (this: unknown, sql: string, ...rest: unknown[]) => Promise<unknown> };
  void runner.release();
  const original = proto.query;
  // Each statement's kind and key, by its text: two regular expressions over every statement's text were
  // 2-3 % of the relay process's CPU in a profile (issue #38), charged to the relay's CPU per delivery.
  const kinds = new Map<string, { kind: string; key: string }>();
  const kindOf = (sql: string) => {
    let known = kinds.get(sql);
    if (!known) {
      known = {
        kind: sql.replace(/\s+/g, ' ').trim().slice(0, 48),
        key: sql
          .replace(/^\s*EXPLAIN\s+/, '')
          .replace(/\s+/g, ' ')
          .trim()
          .slice(0, 48),
      };
      if (kinds.size < 1_000) kinds.set(sql, known);
    }
    return known;
  };
  proto.query = async function (this: unknown, sql: string, ...rest: unknown[]) {
    const { kind, key } = kindOf(sql);
    const connection = (this as { databaseConnection?: object }).databaseConnection;
    const planned = connection ? (seen.get(connection) ?? new Set<string>()) : undefined;
    if (connection && planned && !seen.has(connection)) seen.set(connection, planned);
    const first = planned !== undefined && !planned.has(key);
    planned?.add(key);
    const started = performance.now();
    let rows: unknown;
    try {
      return (rows = await original.call(this, sql, ...rest));
    } finally {
      const ms = performance.now() - started;
      const entry = stats.get(kind) ?? { count: 0, ms: 0, empty: 0 };
      entry.count++;
      entry.ms += ms;
      // Statements that answered no rows (a claim that found nothing still walked every lane).
      if (Array.isArray(rows) && rows.length === 0) entry.empty++;
      stats.set(kind, entry);
      if (markedAt > 0) {
        const second = Math.floor((Date.now() - markedAt) / 1000);
        const bucket = second < 3 ? `s${second}` : 'after';
        const byKind = buckets.get(bucket) ?? new Map();
        buckets.set(bucket, byKind);
        const slot = byKind.get(kind) ?? { n: 0, ms: 0, maxMs: 0, rows: 0 };
        slot.n++;
        slot.ms += ms;
        slot.maxMs = Math.max(slot.maxMs, ms);
        if (Array.isArray(rows)) slot.rows += rows.length;
        byKind.set(kind, slot);
      }
      if (ready && first) {
        cold.coldStatements++;
        cold.coldStatementMs += ms;
      }
    }
  };
  return {
    queries: () =>
      Object.fromEntries(
        [...stats].sort((a, b) => b[1].ms - a[1].ms).map(([kind, entry]) => [kind, { count: entry.count, ms: Math.round(entry.ms), empty: entry.empty }]),
      ),
    ready: () => void (ready = true),
    timeline: {
      mark: (at) => void (markedAt = at),
      read: () =>
        Object.fromEntries(
          [...buckets].map(([bucket, byKind]) => [
            bucket,
            Object.fromEntries(
              [...byKind].map(([kind, slot]) => [
                kind.slice(0, 24),
                { n: slot.n, meanMs: Math.round((slot.ms / slot.n) * 10) / 10, maxMs: Math.round(slot.maxMs), rows: slot.rows },
              ]),
            ),
          ]),
        ),
    },
    cold: () => ({ ...cold, coldStatementMs: Math.round(cold.coldStatementMs) }),
  };
}
