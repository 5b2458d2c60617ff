import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { type Bus, InProcessBus, NatsBus } from '@gw/bus';
import { activeTraceFields, flushTraces, inSpan, SpanKind, startTracing, stopTracing } from '@gw/platform';
import { testNatsUrl } from '@gw/testing';

/**
 * Over both transports, a request made inside a span is one trace: the caller's span, the bus's client
 * span, the handler's server span (its parent the client span, whose context the message carried in
 * its `traceparent` header); the handler sees that context as the active one. With tracing off the
 * bus makes no span and the handler sees no context.
 */
const transports: Array<[string, (name: string) => Promise<Bus | null>]> = [
  ['in-process', async () => new InProcessBus()],
  [
    'NATS',
    async (name) => {
      const url = await testNatsUrl();
      return url ? NatsBus.connect(url, name) : null;
    },
  ],
];

describe.each(transports)('Bus tracing over %s', (transport, open) => {
  const subject = `instance.t${Date.now()}${Math.floor(Math.random() * 1e6)}.echo`;

  describe('with tracing on', () => {
    const exporter = new InMemorySpanExporter();
    let caller: Bus | null;
    let callee: Bus | null;

    beforeAll(async () => {
      startTracing({ tracesUrl: 'http://127.0.0.1:9/v1/traces' }, { exporter: () => exporter });
      caller = await open('gateway');
      // Over NATS, another connection (as another process would be) whose spans are the worker's.
      callee = transport === 'NATS' ? await open('session-worker-7') : caller;
    });
    afterAll(async () => {
      if (callee !== caller) await callee?.close();
      await caller?.close();
      await stopTracing();
    });

    it('should make the caller, the client and the handler spans one trace', async () => {
      if (!caller || !callee) return console.warn('skipped (no NATS)');
      let seen: { trace_id?: string; span_id?: string } = {};
      callee.subscribe(subject.replace(/echo$/, '>'), async () => {
        seen = activeTraceFields();
        return { ok: true };
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const traceId = await inSpan('gateway', 'caller', {}, async (span) => {
        await caller!.request(subject, {}, { timeoutMs: 3000 });
        return span!.spanContext().traceId;
      });
      await flushTraces();
      const spans = exporter.getFinishedSpans();
      const client = spans.find((span) => span.name === 'bus instance.*.echo' && span.kind === SpanKind.CLIENT);
      const server = spans.find((span) => span.name === 'handle instance.*.echo' && span.kind === SpanKind.SERVER);
      expect(client?.spanContext().traceId).toBe(traceId);
      expect(server?.spanContext().traceId).toBe(traceId);
      expect(server?.parentSpanContext?.spanId).toBe(client?.spanContext().spanId);
      expect(seen).toEqual({ trace_id: traceId, span_id: server?.spanContext().spanId });
      expect(client?.resource.attributes['service.name']).toBe('gateway');
      expect(server?.resource.attributes['service.name']).toBe(transport === 'NATS' ? 'session-worker' : 'gateway');
    });
  });

  describe('with tracing off', () => {
    it('should make no span and give the handler no context', async () => {
      const bus = await open('gateway');
      if (!bus) return console.warn('skipped (no NATS)');
      try {
        let seen: unknown = 'not called';
        bus.subscribe(`${subject}.off`, async () => {
          seen = activeTraceFields();
          return null;
        });
        await new Promise((resolve) => setTimeout(resolve, 50));
        const span = await inSpan('gateway', 'caller', {}, async (made) => made);
        await bus.request(`${subject}.off`, {}, { timeoutMs: 3000 });
        expect(span).toBeUndefined();
        expect(seen).toEqual({});
      } finally {
        await bus.close();
      }
    });
  });
});
