import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeliveryRepository, InstanceRepository, WebhookRepository } from '@gw/persistence';
import { createLogger, flushTraces, SsrfGuard, startTracing, stopTracing } from '@gw/platform';
import { WEBHOOK_RELAY_DEFAULTS, WebhookRelay } from '@gw/relay';
import { nextPhone, Stack, waitFor } from './support/stack';

/** One span as an OTLP/HTTP JSON export carries it, with the `service.name` of its resource. */
interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
type OtlpAttributes = Array<{ key: string; value: OtlpValue }> | undefined;

const valueOf = (value: OtlpValue) => value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
const attributesOf = (list: OtlpAttributes) => Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));

/** A loopback OTLP collector: takes `POST /v1/traces` (OTLP/HTTP, JSON bodies) and keeps the spans. */
async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces' && request.headers['content-type']?.includes('json')) {
        const exported = JSON.parse(body) as {
          resourceSpans: Array<{
            resource: { attributes: OtlpAttributes };
            scopeSpans: Array<{
              spans: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: OtlpAttributes }>;
            }>;
          }>;
        };
        for (const resource of exported.resourceSpans) {
          const service = String(attributesOf(resource.resource.attributes)['service.name']);
          for (const scope of resource.scopeSpans)
            for (const span of scope.spans)
              spans.push({
                service,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
              });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A loopback webhook receiver that keeps the headers of what it accepted. */
async function startWebhookReceiver() {
  const accepted: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      accepted.push({ headers: request.headers, body });
      response.writeHead(200);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Traces end to end (issue #40), exported over OTLP/HTTP JSON to a loopback collector: a send through
 * the API is one trace from the HTTP request through the bus and the worker's op to the Baileys send
 * ended by the server's ack; a received message is one trace from the worker's inbound store through
 * the outbox to the relay's delivery, whose webhook request carries that trace's `traceparent`. Log
 * lines written inside a span carry its `trace_id`.
 */
describe('traces end to end (OTLP to a loopback collector)', () => {
  const stack = new Stack();
  const lines: string[] = [];
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let webhooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let relay: WebhookRelay;
  let token: string;
  let phone: string;
  const contact = nextPhone('5548');

  /** The collector's spans once every provider flushed and `accept` holds (spans come in batches). */
  const collected = async (accept: (spans: ReceivedSpan[]) => boolean, what: string) =>
    waitFor(
      async () => {
        await flushTraces();
        return otlp.spans;
      },
      accept,
      15_000,
      what,
    );

  /** From the span up to its trace's root, each parent in the same trace (as far as the collector has them). */
  const chainOf = (spans: ReceivedSpan[], start: ReceivedSpan): ReceivedSpan[] => {
    const byId = new Map(spans.filter((span) => span.traceId === start.traceId).map((span) => [span.spanId, span]));
    const chain: ReceivedSpan[] = [];
    for (let span: ReceivedSpan | undefined = start; span; span = byId.get(span.parentSpanId)) chain.push(span);
    return chain;
  };
  /** The acked send's span of `messageId`, once its whole chain up to the root span has been collected. */
  const ackedSendWithItsRoot = (spans: ReceivedSpan[], messageId: string) => {
    const ack = spans.find((span) => span.name === 'whatsapp send' && span.attributes['wa.message.id'] === messageId && span.attributes['wa.ack'] === 'acked');
    return ack !== undefined && chainOf(spans, ack).at(-1)?.parentSpanId === '';
  };

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    // Before the loggers: their lines carry trace_id only when tracing was on when they were made.
    startTracing({ tracesUrl: `${otlp.url}/v1/traces` });
    const logger = createLogger('traces', 'debug', { destination: { write: (line: string) => void lines.push(line) } });
    await stack.start({}, logger);
    webhooks = await startWebhookReceiver();
    relay = new WebhookRelay(
      new DeliveryRepository(stack.db.dataSource),
      new WebhookRepository(stack.db.dataSource),
      new InstanceRepository(stack.db.dataSource),
      stack.bus,
      {
        ...WEBHOOK_RELAY_DEFAULTS,
        publicBaseUrl: 'https://gw.example',
        includeToken: false,
        retryScheduleMs: [100, 100, 100],
        pollIntervalMs: 100,
        ssrf: SsrfGuard.fromList('127.0.0.0/8'),
      },
      logger,
    );
    relay.start();
    ({ token, phone } = await stack.connectedInstance('traced'));
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Traced contact' });
    const hook = await stack.gw.call('POST', '/webhook', { token, body: { url: `${webhooks.url}/hook`, events: ['messages'] } });
    expect(hook.status).toBe(200);
  }, 90_000);

  afterAll(async () => {
    await relay?.stop();
    await stack.stop();
    await stopTracing();
    await webhooks?.close();
    await otlp?.close();
  });

  it('should make one trace of a send: HTTP request, bus, worker op, the Baileys send ended by the ack', async () => {
    const sent = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'traced hello' } });
    expect(sent.status).toBe(200);
    expect(sent.body.status).toBe('Sent');
    const messageId: string = sent.body.messageid;

    // Spans reach the collector in batches: wait until the ack's chain reaches its root.
    const spans = await collected((all) => ackedSendWithItsRoot(all, messageId), 'the spans of the send');
    const ack = spans.find((span) => span.name === 'whatsapp send' && span.attributes['wa.message.id'] === messageId)!;
    const chain = chainOf(spans, ack);
    const byId = new Map(spans.filter((span) => span.traceId === ack.traceId).map((span) => [span.spanId, span]));
    expect(chain.map((span) => [span.service, span.name])).toEqual([
      ['session-worker', 'whatsapp send'],
      ['session-worker', 'op send'],
      ['gateway', 'handle instance.*.send'],
      ['gateway', 'bus instance.*.send'],
      ['gateway', 'POST /send/text'],
    ]);
    expect(chain[chain.length - 1].parentSpanId).toBe('');
    expect(ack.attributes['wa.ack']).toBe('acked');
    expect(chain[chain.length - 1].attributes['http.response.status_code']).toBe(200);

    // The access line names the trace (written as the response ends, the request's span still active:
    // the logger's mixin adds its span_id too).
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const access = logged.find((line) => line.msg === 'request' && line.url === '/send/text');
    expect(access?.trace_id).toBe(ack.traceId);
    expect(byId.has(access?.span_id as string)).toBe(true);
  });

  it("should continue the accepting request's trace when the dispatcher sends an async send", async () => {
    const dispatcher = stack.asyncDispatcher();
    try {
      const accepted = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'traced later', async: true } });
      expect(accepted.status).toBe(200);
      const messageId: string = accepted.body.messageid;
      // The dispatcher's `queue send` span ends after the worker's: wait for the whole chain, not the ack alone.
      const spans = await collected((all) => ackedSendWithItsRoot(all, messageId), 'the spans of the async send');
      const ack = spans.find((span) => span.name === 'whatsapp send' && span.attributes['wa.message.id'] === messageId)!;
      const chain = chainOf(spans, ack);
      expect(chain.map((span) => [span.service, span.name])).toEqual([
        ['session-worker', 'whatsapp send'],
        ['session-worker', 'op send'],
        ['gateway', 'handle instance.*.send'],
        ['gateway', 'bus instance.*.send'],
        ['dispatcher', 'queue send'],
        ['gateway', 'POST /send/text'],
      ]);
    } finally {
      await dispatcher.stop();
    }
  });

  it('should make one trace of a received message: inbound store, relay delivery, and the webhook request carries it', async () => {
    const text = `traced inbound ${Date.now()}`;
    await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, text });
    const delivery = await waitFor(
      async () => webhooks.accepted.find((entry) => entry.body.includes(text)),
      (found) => found !== undefined,
      20_000,
      'the webhook delivery',
    );
    const traceparent = String(delivery!.headers.traceparent);
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, parentId] = traceparent.split('-');

    const spans = await collected((all) => all.some((span) => span.spanId === parentId), 'the spans of the received message');
    const deliver = spans.find((span) => span.spanId === parentId)!;
    expect(deliver).toMatchObject({ service: 'webhook-relay', name: 'deliver webhook', traceId });
    const store = spans.find((span) => span.spanId === deliver.parentSpanId)!;
    expect(store).toMatchObject({ service: 'session-worker', name: 'inbound store', traceId, parentSpanId: '' });
    // Its own trace: nothing of the request that placed the instance (the socket was made outside it).
    expect(spans.filter((span) => span.traceId === traceId).every((span) => ['inbound store', 'deliver webhook'].includes(span.name))).toBe(true);
    // The event as delivered is the public payload: no trace field in it.
    expect(delivery!.body).not.toContain('traceparent');
  });
});
