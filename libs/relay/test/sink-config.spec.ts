import { maskUrlCredentials } from '@gw/persistence';
import { ConfigError, EnvReader, SsrfGuard } from '@gw/platform';
import { checkBrokerHosts, parseBrokerUrl, rabbitMqOptions, rabbitMqPublication, readEnvSinks } from '@gw/relay';

describe('broker URLs', () => {
  it('parses one or several hosts, credentials, vhost and parameters, with default ports', () => {
    expect(parseBrokerUrl('rabbitmq', 'amqp://user:p%40ss@rabbit.example/%2Fprod?heartbeat=5')).toMatchObject({
      scheme: 'amqp',
      username: 'user',
      password: 'p@ss',
      hosts: [{ host: 'rabbit.example', port: 5672 }],
      path: '/prod',
    });
    expect(parseBrokerUrl('nats', 'nats://tok@n1:4223,n2,[::1]:4000').hosts).toEqual([
      { host: 'n1', port: 4223 },
      { host: 'n2', port: 4222 },
      { host: '::1', port: 4000 },
    ]);
    expect(parseBrokerUrl('rabbitmq', 'amqps://h').hosts).toEqual([{ host: 'h', port: 5671 }]);
  });

  it.each([
    ['rabbitmq', 'http://h', /amqp:\/\/ or amqps:\/\//],
    ['rabbitmq', 'amqp://a,b', /one RabbitMQ host/],
    ['nats', 'nats://h:99999', /bad port/],
    ['nats', 'nats://', /must look like/],
    ['kafka', 'kafka://bad host', /bad host/],
  ] as const)('refuses %s url %s', (kind, url, message) => {
    expect(() => parseBrokerUrl(kind, url)).toThrow(message);
  });

  it('masks passwords and lone tokens', () => {
    expect(maskUrlCredentials('amqp://guest:guest@h:5672/')).toBe('amqp://guest:***@h:5672/');
    expect(maskUrlCredentials('nats://s3cr3t@h:4222')).toBe('nats://***@h:4222');
    expect(maskUrlCredentials('kafka://h1,h2')).toBe('kafka://h1,h2');
  });

  it('lets a broker host through the SSRF guard only when allowed', async () => {
    await expect(checkBrokerHosts(new SsrfGuard(), parseBrokerUrl('rabbitmq', 'amqp://127.0.0.1'))).rejects.toThrow(
      /broker 127\.0\.0\.1:5672: .*private or reserved/,
    );
    await expect(checkBrokerHosts(new SsrfGuard(), parseBrokerUrl('nats', 'nats://8.8.8.8,10.0.0.1'))).rejects.toThrow(/10\.0\.0\.1/);
    await expect(checkBrokerHosts(SsrfGuard.fromList('127.0.0.0/8'), parseBrokerUrl('kafka', 'kafka://127.0.0.1'))).resolves.toBeUndefined();
  });
});

describe('RabbitMQ mapping', () => {
  it('publishes persistent JSON with the stable id as messageId and the routing key filled in', () => {
    const publication = rabbitMqPublication(rabbitMqOptions({ exchange: 'x', routingKey: 'wa.{instanceName}.{event}' }), {
      id: 'evt_9',
      event: { id: '9', instanceId: 'i1', eventType: 'messages', chatId: '', payload: { instanceName: 'shop' } },
      envelope: {},
      body: '{}',
    });
    expect(publication).toMatchObject({
      exchange: 'x',
      routingKey: 'wa.shop.messages',
      properties: { persistent: true, messageId: 'evt_9', contentType: 'application/json', type: 'messages', headers: { instanceId: 'i1', event: 'messages' } },
    });
    expect(rabbitMqOptions({})).toEqual({ exchange: 'wa-gateway', exchangeType: 'topic', routingKey: '{instance}.{event}' });
  });
});

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
