import { ConfigError, EnvReader } from '@gw/platform';
import { readEnvSinks } from './env-sinks';

describe(readEnvSinks.name, () => {
  const read = (env: Record<string, string>) => readEnvSinks(new EnvReader(env));

  it('names no sink without their variables (the rows are then removed)', () => {
    expect(read({})).toEqual([
      { id: 'env-rabbitmq', values: null },
      { id: 'env-nats', values: null },
      { id: 'env-kafka', values: null },
    ]);
  });

  it('reads the global sinks with their options and the shared event filters', () => {
    const [rabbit, nats, kafka] = read({
      AMQP_URL: 'amqp://guest:guest@rabbit:5672',
      RABBITMQ_EXCHANGE: 'events',
      NATS_SINK_URL: 'nats://nats:4222',
      NATS_SINK_SUBJECT_PREFIX: 'wa.events',
      KAFKA_BROKERS: 'k1:9092,k2:9092',
      KAFKA_TOPIC: 'wa',
      SINK_EVENTS: 'messages, connection',
      SINK_EXCLUDE_MESSAGES: 'wasSentByApi',
    });
    expect(rabbit.values).toMatchObject({ kind: 'rabbitmq', url: 'amqp://guest:guest@rabbit:5672', options: { exchange: 'events', exchangeType: 'topic' } });
    expect(rabbit.values?.events).toEqual(['messages', 'connection']);
    expect(rabbit.values?.excludeMessages).toEqual(['wasSentByApi']);
    expect(nats.values).toMatchObject({ kind: 'nats', options: { subjectPrefix: 'wa.events', stream: 'WA_GATEWAY_EVENTS' } });
    expect(kafka.values).toMatchObject({ kind: 'kafka', url: 'kafka://k1:9092,k2:9092', options: { topic: 'wa' } });
  });

  it.each([
    [{ RABBITMQ_URL: 'http://x' }, 'RABBITMQ_URL'],
    [{ RABBITMQ_EXCHANGE_TYPE: 'weird' }, 'RABBITMQ_EXCHANGE_TYPE'],
    [{ NATS_SINK_STREAM: 'a.b' }, 'NATS_SINK_STREAM'],
    [{ NATS_SINK_SUBJECT_PREFIX: 'a.>' }, 'NATS_SINK_SUBJECT_PREFIX'],
    [{ NATS_SINK_SUBJECT_PREFIX: 'queue.x' }, 'NATS_SINK_SUBJECT_PREFIX'],
    [{ SINK_EVENTS: 'nope' }, 'SINK_EVENTS'],
    [{ KAFKA_TOPIC: 'a b' }, 'KAFKA_TOPIC'],
  ])('refuses %j naming %s', (env, variable) => {
    let error: unknown;
    try {
      read(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
  });
});
