import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-node';
import { inSpan, startTracing, stopTracing } from '@gw/platform';
import { kafkaRecord, kafkaSinkOptions } from './kafka.transport';
import { natsPublication } from './nats.transport';
import { rabbitMqOptions, rabbitMqPublication } from './rabbitmq.transport';
import type { SinkMessage } from './transport';

const message: SinkMessage = { id: 'evt_9', event: { id: '9', instanceId: 'i1', eventType: 'messages', chatId: '', payload: {} }, body: '{}' };

/** The headers of one event on each broker sink, built while the relay's delivery span is active (or not). */
const headersOnEveryBroker = () => ({
  nats: natsPublication({ subjectPrefix: 'p', stream: 'S' }, message).headers,
  kafka: kafkaRecord(kafkaSinkOptions({}), message).message.headers as Record<string, unknown>,
  rabbitmq: rabbitMqPublication(rabbitMqOptions({}), message).properties.headers as Record<string, unknown>,
});

/** Issue #40: broker sinks carry the delivery span's `traceparent` as a webhook request does; nothing with tracing off. */
describe('sink messages and traceparent', () => {
  it('should add no header with tracing off', () => {
    for (const headers of Object.values(headersOnEveryBroker())) expect(headers).not.toHaveProperty('traceparent');
  });

  describe('with tracing on', () => {
    beforeAll(() => startTracing({ tracesUrl: 'http://127.0.0.1:9/v1/traces' }, { exporter: () => new InMemorySpanExporter() }));
    afterAll(() => stopTracing());

    it("should carry the active delivery span's traceparent on NATS, Kafka and RabbitMQ", async () => {
      const { headers, spanId } = await inSpan('webhook-relay', 'deliver nats', {}, async (span) => ({
        headers: headersOnEveryBroker(),
        spanId: span!.spanContext().spanId,
      }));
      for (const broker of Object.values(headers)) expect(String(broker.traceparent)).toMatch(new RegExp(`^00-[0-9a-f]{32}-${spanId}-01$`));
    });
  });
});
