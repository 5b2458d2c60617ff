/**
 * Example bodies of the routes' answers (`@ApiReply(…, { example })`): the reference's examples where it
 * has one, else what the e2e specs assert, with made-up ids.
 */

// The shared answers' examples sit beside their classes (common/dto); the areas not converted yet import them from here.
export {
  CHAT_EXAMPLE,
  CHAT_TOTALS_EXAMPLE,
  DISCONNECTED_INSTANCE_EXAMPLE,
  INSTANCE_EXAMPLE,
  MESSAGE_EXAMPLE,
  WEBHOOK_ERROR_EXAMPLE,
} from '../common/dto/common.examples';

const OWNER = '5511999999999';

/** Event sinks to message brokers (issue #18): the broker URL with its password masked. */
const SINK_BASE = {
  enabled: true,
  events: ['messages', 'connection'],
  excludeMessages: ['wasSentByApi'],
  includeToken: false,
  instance_id: 'r1a2b3c4d5e6f7a',
  created: '2024-01-01T12:00:00.000Z',
  updated: '2024-01-01T12:00:00.000Z',
};
export const RABBITMQ_SINK_EXAMPLE = {
  id: 'r9f8e7d6c5b4a3',
  kind: 'rabbitmq',
  url: 'amqp://wa:***@rabbit.example:5672/',
  exchange: 'wa-gateway',
  exchangeType: 'topic',
  routingKey: '{instance}.{event}',
  ...SINK_BASE,
};
export const NATS_SINK_EXAMPLE = {
  id: 'r8e7d6c5b4a3f2',
  kind: 'nats',
  url: 'nats://nats.example:4222',
  subjectPrefix: 'wa-gateway.events',
  stream: 'WA_GATEWAY_EVENTS',
  ...SINK_BASE,
};
export const KAFKA_SINK_EXAMPLE = {
  id: 'r7d6c5b4a3f2e1',
  kind: 'kafka',
  url: 'kafka://k1.example:9092,k2.example:9092',
  topic: 'wa-gateway-events',
  ...SINK_BASE,
};

export const FOLDER_EXAMPLE = {
  id: 'f4a1b2c3d4e5f',
  info: 'Campanha Janeiro',
  status: 'done',
  scheduled_for: 1706198400000,
  delayMin: 10,
  delayMax: 30,
  log_delivered: 2,
  log_failed: 0,
  log_played: 0,
  log_read: 1,
  log_sucess: 2,
  log_total: 2,
  owner: OWNER,
  created: '2024-01-25T15:00:00.000Z',
  updated: '2024-01-25T15:01:00.000Z',
};
