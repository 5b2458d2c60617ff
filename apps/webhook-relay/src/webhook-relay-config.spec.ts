import { EnvReader } from '@gw/platform';
import { itRefusesABadServiceHostEnv, validServiceHostEnv } from '@gw/testing';
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

  itRefusesABadServiceHostEnv(load);
});
