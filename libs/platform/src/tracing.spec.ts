import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { EnvReader } from './config';
import { createLogger } from './logger';
import {
  activeTraceFields,
  activeTraceparent,
  contextOfTraceparent,
  flushTraces,
  injectTraceHeaders,
  inSpan,
  outsideTraces,
  readTracingConfig,
  startTracing,
  stopTracing,
  tracingEnabled,
} from './tracing';

/** A logger whose lines the test reads (made after tracing started or not, as each service's main does). */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('tracing-spec', 'info', { destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  return { logger, lines };
}

describe('readTracingConfig', () => {
  const read = (env: Record<string, string>) => readTracingConfig(new EnvReader(env));

  it('should leave tracing off without an endpoint', () => {
    expect(read({})).toBeUndefined();
  });

  it('should send to <endpoint>/v1/traces, or to the traces endpoint as given', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({ tracesUrl: 'http://collector:4318/v1/traces' });
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/otlp/traces' })).toEqual({
      tracesUrl: 'https://b/otlp/traces',
    });
  });

  it('should stay off when OTEL_SDK_DISABLED is true', () => {
    expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  });

  it('should refuse an endpoint that is not an http(s) URL, naming the variable', () => {
    expect(() => read({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });
});

describe('tracing off (no endpoint)', () => {
  it('should make no span, inject no header, and add no field to log lines', async () => {
    expect(startTracing(undefined)).toBeUndefined();
    expect(tracingEnabled()).toBe(false);
    const { logger, lines } = capturedLogger();
    const span = await inSpan('gateway', 'work', {}, async (made) => {
      logger.info('inside');
      return made;
    });
    const carrier: Record<string, string> = {};
    injectTraceHeaders(carrier);
    expect(span).toBeUndefined();
    expect(carrier).toEqual({});
    expect(activeTraceparent()).toBeUndefined();
    expect(lines[0]).not.toHaveProperty('trace_id');
  });
});

describe('tracing on', () => {
  const exporter = new InMemorySpanExporter();

  beforeAll(() => {
    startTracing({ tracesUrl: 'http://127.0.0.1:9/v1/traces' }, { exporter: () => exporter });
  });
  afterAll(async () => {
    await stopTracing();
  });

  it('should write trace_id and span_id in the lines logged inside a span, and none outside', async () => {
    const { logger, lines } = capturedLogger();
    const ids = await inSpan('gateway', 'work', {}, async (span) => {
      logger.info('inside');
      return span!.spanContext();
    });
    logger.info('outside');
    expect(lines[0]).toMatchObject({ msg: 'inside', trace_id: ids.traceId, span_id: ids.spanId });
    expect(lines[1]).not.toHaveProperty('trace_id');
  });

  it('should inject the active span as traceparent, and continue a stored one', async () => {
    const carrier: Record<string, string> = {};
    const traceparent = await inSpan('dispatcher', 'accept', {}, async () => {
      injectTraceHeaders(carrier);
      return activeTraceparent();
    });
    expect(carrier.traceparent).toBe(traceparent);
    const child = await inSpan('webhook-relay', 'later', { parent: contextOfTraceparent(traceparent) }, async (span) => span!);
    await flushTraces();
    const accept = exporter.getFinishedSpans().find((span) => span.name === 'accept')!;
    expect(traceparent).toBe(`00-${accept.spanContext().traceId}-${accept.spanContext().spanId}-01`);
    const later = exporter.getFinishedSpans().find((span) => span.name === 'later')!;
    expect(later.parentSpanContext?.spanId).toBe(accept.spanContext().spanId);
    expect(later.resource.attributes['service.name']).toBe('webhook-relay');
    expect(child.spanContext().traceId).toBe(accept.spanContext().traceId);
  });

  it('should start new traces, and run work outside any, when asked', async () => {
    await inSpan('gateway', 'outer', {}, async (outer) => {
      expect(outsideTraces(() => activeTraceFields())).toEqual({});
      await inSpan('session-worker', 'own', { newTrace: true }, async (own) => {
        expect(own!.spanContext().traceId).not.toBe(outer!.spanContext().traceId);
      });
    });
  });

  it('should mark a span failed when its work throws', async () => {
    await expect(inSpan('gateway', 'failing', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await flushTraces();
    expect(exporter.getFinishedSpans().find((span) => span.name === 'failing')?.status).toMatchObject({ code: 2, message: 'boom' });
  });

  it('should say so when OTEL_EXPORTER_OTLP_PROTOCOL asks for what we do not send', async () => {
    await stopTracing();
    expect(startTracing({ tracesUrl: 'http://c/v1/traces', protocol: 'http/protobuf' }, { exporter: () => exporter })).toMatch(/http\/json/);
  });
});
