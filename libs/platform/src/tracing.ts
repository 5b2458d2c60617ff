import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { EnvReader } from './config';

export { SpanKind } from '@opentelemetry/api';
export type { Context, Span } from '@opentelemetry/api';

/** The services of the gateway: each one's spans carry its name as `service.name`. */
export type TracedService = 'gateway' | 'session-worker' | 'dispatcher' | 'webhook-relay';

export interface TracingConfig {
  /** Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  tracesUrl: string;
  /** OTEL_EXPORTER_OTLP_PROTOCOL as set; we send OTLP/HTTP with JSON bodies, whatever it says (see startTracing). */
  protocol?: string;
}

/**
 * Tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, off
 * otherwise (undefined). OTEL_SDK_DISABLED=true turns it off whatever the endpoint says.
 */
export function readTracingConfig(env: EnvReader): TracingConfig | undefined {
  if (env.boolean('OTEL_SDK_DISABLED', false)) return undefined;
  const traces = env.url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:']);
  const base = env.url('OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']);
  if (!traces && !base) return undefined;
  return {
    tracesUrl: traces ?? `${(base as string).replace(/\/+$/, '')}/v1/traces`,
    protocol: env.optionalString('OTEL_EXPORTER_OTLP_PROTOCOL'),
  };
}

interface TracingState {
  config: TracingConfig;
  providers: Map<TracedService, NodeTracerProvider>;
  /** Tests pass their own exporter; otherwise one OTLP exporter per service's provider. */
  exporter?: () => SpanExporter;
}

/** Off until startTracing: every helper below then runs its work as it is, with no span and no context. */
let state: TracingState | undefined;

/** True once startTracing ran (with an endpoint) in this process. */
export function tracingEnabled(): boolean {
  return state !== undefined;
}

/**
 * Starts tracing for this process when `config` is set (readTracingConfig), before anything logs or
 * serves: registers the AsyncLocalStorage context manager and the W3C `traceparent` propagator, and
 * makes a provider (its own `service.name`, a batch processor, an OTLP/HTTP JSON exporter) per service
 * that asks for a tracer (the embedded default runs all four services in one process). Without config
 * it does nothing: the helpers stay no-ops, no exporter, no span, no context switch.
 * Returns what to say about it in the log (a protocol we do not speak), if anything.
 */
export function startTracing(config: TracingConfig | undefined, options: { exporter?: () => SpanExporter } = {}): string | undefined {
  if (!config || state) return undefined;
  state = { config, providers: new Map(), exporter: options.exporter };
  // The first provider registers the globals (context manager and propagator); the others only make spans.
  providerOf('gateway').register();
  const protocol = config.protocol;
  return protocol && protocol !== 'http/json'
    ? `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: spans are sent as OTLP/HTTP with JSON bodies (http/json) to ${config.tracesUrl}`
    : undefined;
}

/** Flushes what is batched and stops every provider (tests, and a process that stops). */
export async function stopTracing(): Promise<void> {
  const current = state;
  if (!current) return;
  state = undefined;
  await Promise.all([...current.providers.values()].map((provider) => provider.shutdown().catch(() => undefined)));
  trace.disable();
  context.disable();
  propagation.disable();
}

/** Exports what every provider holds now (tests read the receiver after it). */
export async function flushTraces(): Promise<void> {
  if (!state) return;
  await Promise.all([...state.providers.values()].map((provider) => provider.forceFlush()));
}

function providerOf(service: TracedService): NodeTracerProvider {
  const current = state as TracingState;
  let provider = current.providers.get(service);
  if (!provider) {
    const exporter = current.exporter ? current.exporter() : new LazyOtlpExporter(current.config.tracesUrl);
    provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': service }),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000 })],
    });
    current.providers.set(service, provider);
  }
  return provider;
}

/**
 * The OTLP/HTTP exporter, loaded with the first batch of spans it exports rather than with the process: its modules
 * cost every service ~0.1 s of CPU at start (a CPU profile of each service's start), and tracing is off by default.
 */
class LazyOtlpExporter implements SpanExporter {
  private inner?: Promise<SpanExporter>;

  constructor(private readonly url: string) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const failed = (error: unknown) => done({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
    this.load().then((exporter) => {
      // A throw of the exporter's own (its serialiser) fails this batch, as the batch processor's promise did before.
      try {
        exporter.export(spans, done);
      } catch (error) {
        failed(error);
      }
    }, failed);
  }

  async shutdown(): Promise<void> {
    await (await this.inner?.catch(() => undefined))?.shutdown();
  }

  async forceFlush(): Promise<void> {
    await (await this.inner?.catch(() => undefined))?.forceFlush?.();
  }

  /** The exporter, loaded once (a load that failed is tried again by the next batch). */
  private load(): Promise<SpanExporter> {
    this.inner ??= import('@opentelemetry/exporter-trace-otlp-http')
      .then(({ OTLPTraceExporter }) => new OTLPTraceExporter({ url: this.url }))
      .catch((error: unknown) => {
        this.inner = undefined;
        throw error;
      });
    return this.inner;
  }
}

/** The tracer of a service (only while tracing is on; the helpers below check that first). */
function tracerOf(service: TracedService): Tracer {
  return providerOf(service).getTracer('wa-gateway');
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The context the span continues (one extracted from a carrier); default: the active one. */
  parent?: Context;
  /** A new trace, whatever is active (a received message is the start of its own trace). */
  newTrace?: boolean;
}

function parentOf(options: SpanOptions): Context {
  return options.newTrace ? ROOT_CONTEXT : (options.parent ?? context.active());
}

/**
 * Runs `work` outside any trace (tracing on): what it sets up and later calls back (a socket's event
 * listeners) does not inherit the span of the request that happened to create it.
 */
export function outsideTraces<T>(work: () => T): T {
  return state ? context.with(ROOT_CONTEXT, work) : work();
}

/**
 * Runs `work` inside a new span of `service` (the span active while it runs, so spans and log lines
 * made inside belong to it), ends the span when `work` settles, an error marking it failed. With
 * tracing off `work` runs as it is (`span` undefined).
 */
export function inSpan<T>(service: TracedService, name: string, options: SpanOptions, work: (span?: Span) => Promise<T>): Promise<T> {
  if (!state) return work();
  const parent = parentOf(options);
  const span = tracerOf(service).startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * A span started now and ended by the caller (`end`), for work that starts in one place and finishes
 * in another (a write that waits for its group's commit). Not made active. Undefined with tracing off.
 */
export function startSpan(service: TracedService, name: string, options: SpanOptions = {}): Span | undefined {
  if (!state) return undefined;
  return tracerOf(service).startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parentOf(options));
}

/** Marks a span failed with what was thrown (its message, not its data). */
export function failSpan(span: Span | undefined, error: unknown): void {
  if (!span) return;
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** Runs `work` with `span` as the active span (no-op without one). */
export function withSpan<T>(span: Span | undefined, work: () => T): T {
  return span ? context.with(trace.setSpan(context.active(), span), work) : work();
}

/** Writes the active context's `traceparent` (and `tracestate`) into `carrier`; nothing with tracing off or no active span. */
export function injectTraceHeaders(carrier: Record<string, string>, span?: Span): void {
  if (!state) return;
  propagation.inject(span ? trace.setSpan(context.active(), span) : context.active(), carrier);
}

/** `headers` with the active context's `traceparent` added (tracing on and a span active); the same object. */
export function withTraceHeaders<T extends Record<string, string>>(headers: T): T {
  injectTraceHeaders(headers);
  return headers;
}

/** A span's W3C `traceparent` value (`00-<trace id>-<span id>-<flags>`), to store with what it made (an outbox row). */
export function traceparentOf(span: Span | undefined): string | undefined {
  if (!span) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/** The active span's `traceparent` (undefined with tracing off or no span active). */
export function activeTraceparent(): string | undefined {
  return state ? traceparentOf(trace.getSpan(context.active())) : undefined;
}

/** Any header-like object (NATS headers, a plain record): what the propagator reads. */
export interface TraceCarrier {
  get(name: string): string | string[] | undefined;
}

const carrierGetter: TextMapGetter<TraceCarrier> = {
  get: (carrier, key) => carrier.get(key),
  keys: () => ['traceparent', 'tracestate'],
};

/** The context a carrier's `traceparent` names (ROOT when it has none, or tracing is off). */
export function extractTraceContext(carrier: TraceCarrier | undefined): Context {
  if (!state || !carrier) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier, carrierGetter);
}

/** The context of a stored `traceparent` value (an outbox row's), ROOT without one. */
export function contextOfTraceparent(traceparent: string | null | undefined): Context {
  if (!state || !traceparent) return ROOT_CONTEXT;
  return extractTraceContext({ get: (name) => (name === 'traceparent' ? traceparent : undefined) });
}

/** `trace_id` and `span_id` of the span active now, for a log line (pino's mixin); empty without one. */
export function activeTraceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
