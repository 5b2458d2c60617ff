import { WEBHOOK_ERROR_EXAMPLE } from '../../common/dto/common.examples';
import type { ReplyResponse } from '../../common/dto/reply.response';
import type { WebhookErrorResponse } from '../../common/dto/webhook-error.response';
import type { SinkResponse } from './sink.response';

/** The bodies the event sinks' routes answer, as the OpenAPI document shows them (the broker URL with its password masked). */
const SINK_BASE = {
  enabled: true,
  events: ['messages', 'connection'],
  excludeMessages: ['wasSentByApi'],
  includeToken: false,
  instance_id: 'r1a2b3c4d5e6f7a',
  created: '2024-01-01T12:00:00.000Z',
  updated: '2024-01-01T12:00:00.000Z',
} satisfies Partial<SinkResponse>;

export const RABBITMQ_SINK_EXAMPLE: SinkResponse = {
  id: 'r9f8e7d6c5b4a3',
  kind: 'rabbitmq',
  url: 'amqp://wa:***@rabbit.example:5672/',
  exchange: 'wa-gateway',
  exchangeType: 'topic',
  routingKey: '{instance}.{event}',
  ...SINK_BASE,
};
export const NATS_SINK_EXAMPLE: SinkResponse = {
  id: 'r8e7d6c5b4a3f2',
  kind: 'nats',
  url: 'nats://nats.example:4222',
  subjectPrefix: 'wa-gateway.events',
  stream: 'WA_GATEWAY_EVENTS',
  ...SINK_BASE,
};
export const KAFKA_SINK_EXAMPLE: SinkResponse = {
  id: 'r7d6c5b4a3f2e1',
  kind: 'kafka',
  url: 'kafka://k1.example:9092,k2.example:9092',
  topic: 'wa-gateway-events',
  ...SINK_BASE,
};

/** A global sink as `/globalsink` answers it: no instance, set through the API or named by the environment (its id then `env-<kind>`). */
function asGlobal({ instance_id: _instance, ...sink }: SinkResponse, source: 'api' | 'env'): SinkResponse {
  return { ...sink, ...(source === 'env' ? { id: `env-${sink.kind}` } : {}), source };
}
export const GLOBAL_RABBITMQ_SINK_EXAMPLE = asGlobal(RABBITMQ_SINK_EXAMPLE, 'api');
export const GLOBAL_NATS_SINK_EXAMPLE = asGlobal(NATS_SINK_EXAMPLE, 'api');
export const ENV_NATS_SINK_EXAMPLE = asGlobal(NATS_SINK_EXAMPLE, 'env');
export const GLOBAL_KAFKA_SINK_EXAMPLE = asGlobal(KAFKA_SINK_EXAMPLE, 'api');
export const ENV_KAFKA_SINK_EXAMPLE = asGlobal(KAFKA_SINK_EXAMPLE, 'env');

/** A publication to a broker that failed for good. */
export const RABBITMQ_SINK_ERROR_EXAMPLE: WebhookErrorResponse = {
  ...WEBHOOK_ERROR_EXAMPLE,
  url: 'amqp://wa:***@rabbit.example:5672/ exchange=wa-gateway routingKey=r1a2b3c4d5e6f7a.messages',
  status_code: 0,
  error: 'connecting: ECONNREFUSED: connect ECONNREFUSED 203.0.113.10:5672',
};
export const NATS_SINK_ERROR_EXAMPLE: WebhookErrorResponse = {
  ...RABBITMQ_SINK_ERROR_EXAMPLE,
  url: 'nats://nats.example:4222 subject=wa-gateway.events.r1a2b3c4d5e6f7a.messages',
};
export const KAFKA_SINK_ERROR_EXAMPLE: WebhookErrorResponse = {
  ...RABBITMQ_SINK_ERROR_EXAMPLE,
  url: 'kafka://k1.example:9092,k2.example:9092 topic=wa-gateway-events',
};
/** The global sinks' errors (the same example each, as before). */
export const GLOBAL_SINK_ERROR_EXAMPLE: WebhookErrorResponse = { ...RABBITMQ_SINK_ERROR_EXAMPLE, type: 'global' };

export const GLOBAL_RABBITMQ_SINK_DELETED_EXAMPLE: ReplyResponse = { response: 'Global RabbitMQ sink deleted' };
export const GLOBAL_NATS_SINK_DELETED_EXAMPLE: ReplyResponse = { response: 'Global NATS sink deleted' };
export const GLOBAL_KAFKA_SINK_DELETED_EXAMPLE: ReplyResponse = { response: 'Global Kafka sink deleted' };
