import { CHATBOT_DEFAULTS } from '@gw/chatbot';
import { ASYNC_DISPATCHER_DEFAULTS } from '@gw/dispatch';
import { EnvReader } from '@gw/platform';
import { configErrorOf, itRefusesABadServiceHostEnv, validServiceHostEnv } from '@gw/testing';
import { loadDispatcherConfig } from './dispatcher-config';

describe(loadDispatcherConfig.name, () => {
  const valid = validServiceHostEnv;
  const load = (env: Record<string, string | undefined>) => loadDispatcherConfig(new EnvReader(env));
  const failure = (env: Record<string, string | undefined>) => configErrorOf(() => load(env));

  it('should apply the defaults', () => {
    expect(load(valid)).toEqual({
      databaseUrl: valid.DATABASE_URL,
      natsUrl: valid.NATS_URL,
      healthPort: 8083,
      healthHost: '0.0.0.0',
      logLevel: 'info',
      logFormat: 'json',
      metrics: { perInstance: false, token: undefined },
      dispatch: { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: expect.any(String) },
      retention: { retentionDays: 7, intervalMs: 3_600_000, auditRetentionDays: 90, deliveryLogRetentionDays: 7 },
      chatbot: expect.objectContaining({
        ...CHATBOT_DEFAULTS,
        runnerId: expect.any(String),
        baseUrls: { openai: '', anthropic: '', gemini: '', deepseek: '' },
      }),
    });
  });

  itRefusesABadServiceHostEnv(load);

  it('should read the dispatch settings', () => {
    expect(load({ ...valid, DISPATCHER_ID: 'd1', DISPATCH_CLAIM_MS: '5000', DISPATCH_MAX_LANES: '8' }).dispatch).toMatchObject({
      dispatcherId: 'd1',
      claimMs: 5_000,
      maxLanes: 8,
    });
  });

  it("should read the audit log's retention, and refuse one under a day", () => {
    expect(load({ ...valid, AUDIT_RETENTION_DAYS: '30' }).retention.auditRetentionDays).toBe(30);
    expect(failure({ ...valid, AUDIT_RETENTION_DAYS: '0' }).variable).toBe('AUDIT_RETENTION_DAYS');
  });

  it("should read the delivery log's retention, by default the messages' one, and refuse one under a day", () => {
    expect(load({ ...valid, MESSAGE_RETENTION_DAYS: '3' }).retention.deliveryLogRetentionDays).toBe(3);
    expect(load({ ...valid, DELIVERY_LOG_RETENTION_DAYS: '30' }).retention.deliveryLogRetentionDays).toBe(30);
    expect(failure({ ...valid, DELIVERY_LOG_RETENTION_DAYS: '0' }).variable).toBe('DELIVERY_LOG_RETENTION_DAYS');
  });

  it('should refuse a claim shorter than a second', () => {
    expect(failure({ ...valid, DISPATCH_CLAIM_MS: '10' }).variable).toBe('DISPATCH_CLAIM_MS');
  });
});
