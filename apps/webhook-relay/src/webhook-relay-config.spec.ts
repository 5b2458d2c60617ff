import { EnvReader } from '@gw/platform';
import { configErrorOf, itRefusesABadServiceHostEnv, validServiceHostEnv } from '@gw/testing';
import { loadWebhookRelayConfig } from './webhook-relay-config';

describe(loadWebhookRelayConfig.name, () => {
  const valid = validServiceHostEnv;
  const load = (env: Record<string, string | undefined>) => loadWebhookRelayConfig(new EnvReader(env));

  it('should apply the defaults', () => {
    expect(load(valid)).toMatchObject({ databaseUrl: valid.DATABASE_URL, natsUrl: valid.NATS_URL, healthPort: 8084, healthHost: '0.0.0.0', logLevel: 'info' });
    expect(load(valid).delivery).toMatchObject({ publicBaseUrl: 'http://localhost:8080', includeToken: false, requestTimeoutMs: 10_000 });
    expect(load(valid).chatwoot).toMatchObject({ enabled: true, requestTimeoutMs: 15_000, claimMs: 60_000 });
    expect(load({ ...valid, CHATWOOT_SYNC: 'false' }).chatwoot.enabled).toBe(false);
  });

  it('should read the global event sinks of env (none by default)', () => {
    expect(load(valid).delivery.envSinks?.every((sink) => sink.values === null)).toBe(true);
    const sinks = load({
      ...valid,
      RABBITMQ_URL: 'amqp://wa:secret@rabbit:5672/prod',
      RABBITMQ_EXCHANGE: 'events',
      KAFKA_BROKERS: 'k1:9092',
      SINK_EVENTS: 'messages',
    }).delivery.envSinks;
    expect(sinks?.find((sink) => sink.id === 'env-rabbitmq')?.values).toMatchObject({
      kind: 'rabbitmq',
      options: { exchange: 'events' },
      events: ['messages'],
    });
    expect(sinks?.find((sink) => sink.id === 'env-kafka')?.values).toMatchObject({ kind: 'kafka', url: 'kafka://k1:9092' });
    expect(configErrorOf(() => load({ ...valid, AMQP_URL: 'http://rabbit' })).variable).toBe('AMQP_URL');
  });

  itRefusesABadServiceHostEnv(load);
});
