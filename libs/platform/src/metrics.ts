import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ConfigError, type EnvReader } from './config';

/**
 * Prometheus metrics: one registry per process, so in the embedded default the gateway's `/metrics`
 * shows every service of the process once. Every name has the `wa_gateway_` prefix and its unit;
 * prom-client's default process metrics (`process_*`, `nodejs_*`) keep their usual names, which the
 * common Node dashboards expect. No label takes values without bound: routes are patterns, send types
 * and outcomes closed sets, and the instance id only with `METRICS_PER_INSTANCE=true`.
 */
export interface MetricsOptions {
  /** Adds an `instance` label to sends, connects and disconnects (METRICS_PER_INSTANCE). */
  perInstance: boolean;
}

/** Latencies of HTTP requests and bus requests: 5 ms … 30 s. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** A send waits for WhatsApp's server ack (and sometimes a typing delay): 25 ms … 2 min. */
const SEND_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** A webhook delivery ends at the receiver's answer or the timeout (10 s by default). */
const WEBHOOK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A group transaction of inbound writes: 1 ms (loopback, one write) … 10 s (one instance far behind). */
const INBOUND_GROUP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];
/** Writes one group transaction carried: 1 … its bound (64 by default). */
const INBOUND_GROUP_WRITE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128];

/** Instance statuses always exported (0 when none), so a dashboard sees a drop to zero. */
export const INSTANCE_STATUSES = ['connected', 'connecting', 'disconnected'] as const;

/** What a scrape reads from Postgres (through a repository); registered by the process that owns it. */
export interface MetricsSources {
  instancesByStatus?: () => Promise<Array<{ status: string; count: number }>>;
  asyncQueue?: () => Promise<Array<{ state: string; depth: number; oldestSeconds: number }>>;
  webhookBacklog?: () => Promise<{ pending: number; oldestSeconds: number }>;
  /** The process's Postgres pool (pg Pool counters; synchronous, no query). */
  databasePool?: () => { total: number; idle: number; waiting: number };
  /**
   * A session worker's inbound queues (synchronous): events received and not yet stored, sockets paused
   * for it, and the writes its store accepted and has not committed yet.
   */
  inboundBacklog?: () => { depth: number; pausedSockets: number; writesPending?: number; decryptsWaiting?: number };
  /**
   * Instances this session worker holds (its live leases): what a HorizontalPodAutoscaler scales the
   * workers on (k8s/session-worker.yaml), one figure per worker pod.
   */
  workerInstances?: () => Promise<number>;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly sources: MetricsSources = {};

  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  readonly sends: Counter<'type' | 'outcome' | 'instance'>;
  readonly sendDuration: Histogram<'type' | 'outcome'>;
  readonly connects: Counter<'reason' | 'instance'>;
  readonly disconnects: Counter<'reason' | 'code' | 'instance'>;
  readonly busRequestDuration: Histogram<'op' | 'outcome'>;
  readonly webhookDeliveries: Counter<'outcome'>;
  readonly webhookDeliveryDuration: Histogram<'outcome'>;
  readonly sinkDeliveries: Counter<'kind' | 'outcome'>;
  readonly sinkDeliveryDuration: Histogram<'kind' | 'outcome'>;
  readonly sseClients: Gauge;
  readonly sourceErrors: Counter<'source'>;
  readonly inboundPauses: Counter;
  readonly instanceMoves: Counter<'outcome'>;
  readonly inboundGroupDuration: Histogram;
  readonly inboundGroupWrites: Histogram;

  constructor(readonly options: MetricsOptions) {
    const registers = [this.registry];
    const perInstance = options.perInstance ? (['instance'] as const) : [];
    collectDefaultMetrics({ register: this.registry });

    this.httpRequests = new Counter({
      name: 'wa_gateway_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpRequestDuration = new Histogram({
      name: 'wa_gateway_http_request_duration_seconds',
      help: 'HTTP request latency, from the request to the last byte of the answer',
      labelNames: ['method', 'route', 'status'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.sends = new Counter({
      name: 'wa_gateway_sends_total',
      help: 'Messages the session workers sent (sync and queued), by content type and outcome (sent, failed, pending: no server ack in time, error: refused before sending)',
      labelNames: ['type', 'outcome', ...perInstance],
      registers,
    });
    this.sendDuration = new Histogram({
      name: 'wa_gateway_send_duration_seconds',
      help: "Send latency in the session worker, from the request to WhatsApp's server ack",
      labelNames: ['type', 'outcome'],
      buckets: SEND_BUCKETS,
      registers,
    });
    this.connects = new Counter({
      name: 'wa_gateway_connects_total',
      help: 'Sessions that opened (paired: a new link, reconnect: stored credentials)',
      labelNames: ['reason', ...perInstance],
      registers,
    });
    this.disconnects = new Counter({
      name: 'wa_gateway_disconnects_total',
      help: 'Socket closes, by what they mean (restart, logged_out, terminal, transient) and the close code',
      labelNames: ['reason', 'code', ...perInstance],
      registers,
    });
    this.busRequestDuration = new Histogram({
      name: 'wa_gateway_bus_request_duration_seconds',
      help: 'Gateway → session worker request latency, by op and outcome (ok or the error code)',
      labelNames: ['op', 'outcome'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'wa_gateway_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome (delivered, http_4xx, http_5xx, http_other, error: network, timeout or refused URL)',
      labelNames: ['outcome'],
      registers,
    });
    this.webhookDeliveryDuration = new Histogram({
      name: 'wa_gateway_webhook_delivery_duration_seconds',
      help: 'Webhook delivery attempt latency, until the receiver answered or the attempt failed',
      labelNames: ['outcome'],
      buckets: WEBHOOK_BUCKETS,
      registers,
    });
    this.sinkDeliveries = new Counter({
      name: 'wa_gateway_sink_deliveries_total',
      help: 'Event sink publish attempts (RabbitMQ, NATS JetStream, Kafka), by kind and outcome (delivered: the broker confirmed it; error)',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.sinkDeliveryDuration = new Histogram({
      name: 'wa_gateway_sink_delivery_duration_seconds',
      help: 'Event sink publish attempt latency, until the broker confirmed it or the attempt failed',
      labelNames: ['kind', 'outcome'],
      buckets: WEBHOOK_BUCKETS,
      registers,
    });
    this.sseClients = new Gauge({ name: 'wa_gateway_sse_clients', help: 'Open /sse streams', registers });
    this.sourceErrors = new Counter({
      name: 'wa_gateway_metrics_source_errors_total',
      help: 'Scrapes whose Postgres read failed (the gauge is absent from that scrape; the count shows from the next one)',
      labelNames: ['source'],
      registers,
    });

    const sources = this.sources;
    const errors = this.sourceErrors;
    new Gauge({
      name: 'wa_gateway_instances',
      help: 'Instances by status (read from Postgres on scrape)',
      labelNames: ['status'],
      registers,
      async collect() {
        this.reset();
        if (!sources.instancesByStatus) return;
        const rows = await sources.instancesByStatus().catch(() => void errors.inc({ source: 'instances' }));
        if (!rows) return;
        for (const status of INSTANCE_STATUSES) this.set({ status }, 0);
        for (const row of rows) this.set({ status: row.status }, row.count);
      },
    });
    // A scrape collects every metric at once: the two gauges of one read share its one query.
    const queueRead = sharedRead(
      () => sources.asyncQueue?.(),
      () => errors.inc({ source: 'async_queue' }),
    );
    const queueGauge = (name: string, help: string, value: (row: { depth: number; oldestSeconds: number }) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['state'],
        registers,
        async collect() {
          this.reset();
          const rows = await queueRead();
          if (!rows) return;
          for (const state of QUEUE_STATES) this.set({ state }, 0);
          for (const row of rows) this.set({ state: row.state }, value(row));
        },
      });
    queueGauge(
      'wa_gateway_async_queue_depth',
      'Queued async sends by state (queued, in_flight, waiting: retry wait or reset), read from Postgres on scrape',
      (row) => row.depth,
    );
    queueGauge('wa_gateway_async_queue_oldest_age_seconds', 'Age of the oldest queued async send by state (0 when none)', (row) => row.oldestSeconds);
    const backlogRead = sharedRead(
      () => sources.webhookBacklog?.(),
      () => errors.inc({ source: 'webhook_backlog' }),
    );
    const backlogGauge = (name: string, help: string, value: (backlog: { pending: number; oldestSeconds: number }) => number) =>
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          const backlog = await backlogRead();
          // Unknown (no source here, or the read failed): no sample rather than a 0 that looks true.
          if (backlog) this.set(value(backlog));
          else this.remove({});
        },
      });
    backlogGauge(
      'wa_gateway_webhook_backlog',
      'Pending webhook deliveries (not delivered yet, retries included), read from Postgres on scrape',
      (backlog) => backlog.pending,
    );
    backlogGauge(
      'wa_gateway_webhook_backlog_oldest_age_seconds',
      'Age of the oldest pending webhook delivery (0 when none)',
      (backlog) => backlog.oldestSeconds,
    );
    new Gauge({
      name: 'wa_gateway_db_pool_connections',
      help: "Postgres connections of this process's pool, by state (total, idle, in_use)",
      labelNames: ['state'],
      registers,
      collect() {
        const pool = sources.databasePool?.();
        if (!pool) return;
        this.set({ state: 'total' }, pool.total);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'in_use' }, pool.total - pool.idle);
      },
    });
    this.inboundPauses = new Counter({
      name: 'wa_gateway_inbound_pauses_total',
      help: "Times a session worker stopped reading a socket because its inbound queue (or the worker's) was full",
      registers,
    });
    this.instanceMoves = new Counter({
      name: 'wa_gateway_worker_instance_moves_total',
      help: 'Instances a session worker over its fair share handed to a worker with room (a rebalance), by outcome (moved, failed)',
      labelNames: ['outcome'],
      registers,
    });
    new Gauge({
      name: 'wa_gateway_inbound_queue_depth',
      help: "Items a session worker received and has not stored yet (all its sockets' inbound queues; a history chunk counts its messages, chats and contacts)",
      registers,
      collect() {
        const backlog = sources.inboundBacklog?.();
        if (backlog) this.set(backlog.depth);
        else this.remove({});
      },
    });
    new Gauge({
      name: 'wa_gateway_inbound_paused_connections',
      help: 'WhatsApp connections (sockets) a session worker is not reading until their inbound queue drains',
      registers,
      collect() {
        const backlog = sources.inboundBacklog?.();
        if (backlog) this.set(backlog.pausedSockets);
        else this.remove({});
      },
    });
    new Gauge({
      name: 'wa_gateway_inbound_decrypt_waiting_connections',
      help: "WhatsApp connections whose decrypts wait for room in their inbound queue (half its bound); Baileys then holds what it was handed, and the connection's reading stops once that is full too",
      registers,
      collect() {
        const waiting = sources.inboundBacklog?.().decryptsWaiting;
        if (waiting !== undefined) this.set(waiting);
        else this.remove({});
      },
    });
    this.inboundGroupDuration = new Histogram({
      name: 'wa_gateway_inbound_write_group_duration_seconds',
      help: "How long a session worker's group transaction of inbound writes (received messages, copies, receipts) took, from its begin to its commit",
      buckets: INBOUND_GROUP_BUCKETS,
      registers,
    });
    this.inboundGroupWrites = new Histogram({
      name: 'wa_gateway_inbound_write_group_writes',
      help: 'Writes one group transaction of inbound writes carried (groups near their bound, 64, for long: the writes fall behind)',
      buckets: INBOUND_GROUP_WRITE_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'wa_gateway_inbound_pending_writes',
      help: "Inbound writes a session worker's store accepted and has not committed yet (waiting for their group, or in it)",
      registers,
      collect() {
        const pending = sources.inboundBacklog?.().writesPending;
        if (pending !== undefined) this.set(pending);
        else this.remove({});
      },
    });
    new Gauge({
      name: 'wa_gateway_worker_instances',
      help: "Instances this session worker holds (its live leases, read from Postgres on scrape); the autoscaler's sessions per worker",
      registers,
      async collect() {
        if (!sources.workerInstances) return void this.remove({});
        const held = await sources.workerInstances().catch(() => void errors.inc({ source: 'worker_instances' }));
        if (held === undefined) this.remove({});
        else this.set(held);
      },
    });
    new Gauge({
      name: 'wa_gateway_db_pool_waiting_requests',
      help: 'Queries waiting for a pooled Postgres connection (above 0 for long: raise DATABASE_POOL_SIZE)',
      registers,
      collect() {
        const pool = sources.databasePool?.();
        if (pool) this.set(pool.waiting);
        else this.remove({});
      },
    });
  }

  /** Registers what scrapes read; a later registration of the same source replaces the earlier one. */
  useSources(sources: MetricsSources): void {
    Object.assign(this.sources, sources);
  }

  /** Forgets sources (a closed DataSource must not be read by the next scrape). */
  dropSources(sources: MetricsSources): void {
    for (const key of Object.keys(sources) as Array<keyof MetricsSources>) {
      if (this.sources[key] === sources[key]) delete this.sources[key];
    }
  }

  /** The exposition: text format and its content type. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** One send's outcome and latency (the worker's send op). */
  recordSend(type: string, outcome: SendOutcome, seconds: number, instanceId: string): void {
    this.sends.inc(this.options.perInstance ? { type, outcome, instance: instanceId } : { type, outcome });
    this.sendDuration.observe({ type, outcome }, seconds);
  }

  recordConnect(reason: 'paired' | 'reconnect', instanceId: string): void {
    this.connects.inc(this.options.perInstance ? { reason, instance: instanceId } : { reason });
  }

  recordDisconnect(reason: string, code: number | undefined, instanceId: string): void {
    const labels = { reason, code: code === undefined ? 'none' : String(code) };
    this.disconnects.inc(this.options.perInstance ? { ...labels, instance: instanceId } : labels);
  }

  /** Times a bus request by its op (`instance.<id>.<op>` → `<op>`) and outcome (`ok` or the error's code). */
  timeBusRequest<T>(subject: string, request: Promise<T>): Promise<T> {
    const started = performance.now();
    const op = busOp(subject);
    return request.then(
      (reply) => {
        this.busRequestDuration.observe({ op, outcome: 'ok' }, (performance.now() - started) / 1000);
        return reply;
      },
      (error: unknown) => {
        const code = (error as { code?: unknown } | null)?.code;
        this.busRequestDuration.observe({ op, outcome: typeof code === 'string' ? code : 'error' }, (performance.now() - started) / 1000);
        throw error;
      },
    );
  }

  recordWebhookDelivery(statusCode: number | null, seconds: number): void {
    const outcome = webhookOutcome(statusCode);
    this.webhookDeliveries.inc({ outcome });
    this.webhookDeliveryDuration.observe({ outcome }, seconds);
  }

  recordSinkDelivery(kind: string, delivered: boolean, seconds: number): void {
    const labels = { kind, outcome: delivered ? 'delivered' : 'error' };
    this.sinkDeliveries.inc(labels);
    this.sinkDeliveryDuration.observe(labels, seconds);
  }
}

/** States of the async queue always exported. */
const QUEUE_STATES = ['queued', 'in_flight', 'waiting'] as const;

/** One read shared by the collects that start while it runs; undefined when unset or failed. */
function sharedRead<T>(read: () => Promise<T> | undefined, onError: () => void): () => Promise<T | undefined> {
  let running: Promise<T | undefined> | undefined;
  return () => {
    if (running) return running;
    const started = read();
    if (!started) return Promise.resolve(undefined);
    running = started
      .catch(() => {
        onError();
        return undefined;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}

export type SendOutcome = 'sent' | 'failed' | 'pending' | 'error';

/** The op of a request subject: `instance.<id>.<op>` → `<op>`; `sessions.*` as is; anything else `other` (no ids as labels). */
export function busOp(subject: string): string {
  if (subject.startsWith('instance.')) {
    const dot = subject.indexOf('.', 9);
    return dot === -1 ? 'other' : subject.slice(dot + 1);
  }
  return subject.startsWith('sessions.') ? subject : 'other';
}

/** A delivery attempt's outcome from the receiver's status (null: no answer). */
export function webhookOutcome(statusCode: number | null): string {
  if (statusCode === null) return 'error';
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode >= 400 && statusCode < 500) return 'http_4xx';
  if (statusCode >= 500 && statusCode < 600) return 'http_5xx';
  return 'http_other';
}

let current: GatewayMetrics | undefined;

/**
 * The process's metrics. `configureMetrics` (at boot, from METRICS_PER_INSTANCE) comes first where
 * the default is not wanted; callers read `metrics()` when they record, never keep it.
 */
export function metrics(): GatewayMetrics {
  current ??= new GatewayMetrics({ perInstance: false });
  return current;
}

/** Sets the process's options; a change builds a new registry (what was counted so far starts again). */
export function configureMetrics(options: MetricsOptions): GatewayMetrics {
  if (!current || current.options.perInstance !== options.perInstance) current = new GatewayMetrics(options);
  return current;
}

/** METRICS_TOKEN and METRICS_PER_INSTANCE, read once at boot. */
export interface MetricsConfig {
  /** A bearer token `GET /metrics` on the gateway then requires (absent: open, as `/health` is). */
  token?: string;
  perInstance: boolean;
}

export function readMetricsConfig(env: EnvReader): MetricsConfig {
  const token = env.optionalString('METRICS_TOKEN');
  if (token !== undefined && token.length < 16) throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters');
  return { token, perInstance: env.boolean('METRICS_PER_INSTANCE', false) };
}
