import { EVENT_TYPES } from '@gw/contracts';
import type { SinkKind, WebhookValues } from '@gw/persistence';
import { ConfigError, type EnvReader } from '@gw/platform';
import { BrokerUrlError, parseBrokerUrl } from './broker-url';
import { RABBITMQ_DEFAULTS, RABBITMQ_EXCHANGE_TYPES } from './rabbitmq.transport';
import { NATS_SINK_DEFAULTS, subjectPrefixProblem } from './nats.transport';
import { KAFKA_SINK_DEFAULTS } from './kafka.transport';
import { EXCLUDE_FLAGS } from '../webhook-filter';

/** A global sink as env names it: its fixed row id, and its values (null: env names none, the row goes). */
export interface EnvSink {
  id: string;
  values: (WebhookValues & { kind: SinkKind }) | null;
}

/** Subject tokens and stream names: letters, digits, `-` and `_` (a prefix may have dots between tokens). */
const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const SUBJECT_PREFIX = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * The global broker sinks of env, beside the global webhook:
 * - RabbitMQ: RABBITMQ_URL (or AMQP_URL) `amqp://user:pass@host:5672/vhost`, RABBITMQ_EXCHANGE
 *   (`wa-gateway`; empty = the default exchange), RABBITMQ_EXCHANGE_TYPE (`topic`), RABBITMQ_ROUTING_KEY
 *   (`{instance}.{event}`).
 * - NATS JetStream: NATS_SINK_URL `nats://host:4222`, NATS_SINK_SUBJECT_PREFIX (`wa-gateway.events`),
 *   NATS_SINK_STREAM (`WA_GATEWAY_EVENTS`).
 * - Kafka: KAFKA_BROKERS `host:9092,host2:9092` (or a `kafka://` URL with credentials), KAFKA_TOPIC.
 * - SINK_EVENTS: the events they take (comma list; all when empty), SINK_EXCLUDE_MESSAGES the
 *   `excludeMessages` flags.
 */
export function readEnvSinks(env: EnvReader): EnvSink[] {
  const list = (name: string, raw: string | undefined, allowed: readonly string[]) => {
    const values = (raw ?? '')
      .split(',')
      .map((value) => value.trim())
      .filter(Boolean);
    const bad = values.find((value) => !allowed.includes(value));
    if (bad) throw new ConfigError(name, `"${bad}" is not one of ${allowed.join(', ')}`);
    return values;
  };
  const events = list('SINK_EVENTS', env.optionalString('SINK_EVENTS'), EVENT_TYPES);
  const excludeMessages = list('SINK_EXCLUDE_MESSAGES', env.optionalString('SINK_EXCLUDE_MESSAGES'), EXCLUDE_FLAGS);
  const sink = (kind: Exclude<SinkKind, 'webhook'>, variable: string, url: string | undefined, options: Record<string, unknown>): EnvSink => {
    if (!url) return { id: `env-${kind}`, values: null };
    try {
      parseBrokerUrl(kind, url);
    } catch (error) {
      if (error instanceof BrokerUrlError) throw new ConfigError(variable, error.message);
      throw error;
    }
    return {
      id: `env-${kind}`,
      values: { kind, url, options, enabled: true, events, excludeMessages, addUrlEvents: false, addUrlTypesMessages: false, includeToken: false },
    };
  };

  const amqpVariable = env.optionalString('RABBITMQ_URL') ? 'RABBITMQ_URL' : 'AMQP_URL';
  const exchangeType = env.optionalString('RABBITMQ_EXCHANGE_TYPE') ?? RABBITMQ_DEFAULTS.exchangeType;
  if (!(RABBITMQ_EXCHANGE_TYPES as readonly string[]).includes(exchangeType))
    throw new ConfigError('RABBITMQ_EXCHANGE_TYPE', `must be one of ${RABBITMQ_EXCHANGE_TYPES.join(', ')}`);
  const exchange = env.string('RABBITMQ_EXCHANGE', RABBITMQ_DEFAULTS.exchange);
  const routingKey = env.string('RABBITMQ_ROUTING_KEY', RABBITMQ_DEFAULTS.routingKey);

  const subjectPrefix = env.string('NATS_SINK_SUBJECT_PREFIX', NATS_SINK_DEFAULTS.subjectPrefix);
  if (!SUBJECT_PREFIX.test(subjectPrefix))
    throw new ConfigError('NATS_SINK_SUBJECT_PREFIX', 'must be subject tokens (letters, digits, - and _) joined by dots');
  const reserved = subjectPrefixProblem(subjectPrefix);
  if (reserved) throw new ConfigError('NATS_SINK_SUBJECT_PREFIX', reserved.replace(/^subjectPrefix /, ''));
  const stream = env.string('NATS_SINK_STREAM', NATS_SINK_DEFAULTS.stream);
  if (!STREAM_NAME.test(stream)) throw new ConfigError('NATS_SINK_STREAM', 'must be letters, digits, - and _');

  const brokers = env.optionalString('KAFKA_BROKERS');
  const topic = env.string('KAFKA_TOPIC', KAFKA_SINK_DEFAULTS.topic);
  if (!/^[A-Za-z0-9._-]{1,249}$/.test(topic)) throw new ConfigError('KAFKA_TOPIC', 'must be letters, digits, ., - and _');

  return [
    sink('rabbitmq', amqpVariable, env.optionalString('RABBITMQ_URL') ?? env.optionalString('AMQP_URL'), { exchange, exchangeType, routingKey }),
    sink('nats', 'NATS_SINK_URL', env.optionalString('NATS_SINK_URL'), { subjectPrefix, stream }),
    sink('kafka', 'KAFKA_BROKERS', brokers && !brokers.includes('://') ? `kafka://${brokers}` : brokers, { topic }),
  ];
}

export { STREAM_NAME, SUBJECT_PREFIX };
