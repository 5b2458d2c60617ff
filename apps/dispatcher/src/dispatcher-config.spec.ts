import { ASYNC_DISPATCHER_DEFAULTS } from '@gw/dispatch';
import { ConfigError, EnvReader } from '@gw/platform';
import { loadDispatcherConfig } from './dispatcher-config';

describe(loadDispatcherConfig.name, () => {
  const valid = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/gateway', NATS_URL: 'nats://127.0.0.1:4222' };
  const load = (env: Record<string, string | undefined>) => loadDispatcherConfig(new EnvReader(env));
  const failure = (env: Record<string, string | undefined>): ConfigError => {
    try {
      load(env);
    } catch (error) {
      if (error instanceof ConfigError) return error;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  it('should apply the defaults', () => {
    expect(load(valid)).toEqual({
      databaseUrl: valid.DATABASE_URL,
      natsUrl: valid.NATS_URL,
      healthPort: 8083,
      healthHost: '0.0.0.0',
      logLevel: 'info',
      dispatch: { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: expect.any(String) },
      retention: { retentionDays: 7, intervalMs: 3_600_000 },
    });
  });

  it('should name DATABASE_URL when it is missing', () => {
    const sut = failure({ NATS_URL: valid.NATS_URL });
    expect(sut.variable).toBe('DATABASE_URL');
    expect(sut.message).toBe('Invalid environment variable DATABASE_URL: is required');
  });

  it('should name NATS_URL when it is empty', () => {
    expect(failure({ ...valid, NATS_URL: '' }).variable).toBe('NATS_URL');
  });

  it('should refuse a database URL that is not postgres', () => {
    expect(failure({ ...valid, DATABASE_URL: 'mysql://127.0.0.1/gateway' }).message).toMatch(/DATABASE_URL: must use postgres: or postgresql:/);
  });

  it('should refuse a health port out of range', () => {
    expect(failure({ ...valid, HEALTH_PORT: '70000' }).variable).toBe('HEALTH_PORT');
  });

  it('should refuse an unknown log level', () => {
    expect(failure({ ...valid, LOG_LEVEL: 'loud' }).variable).toBe('LOG_LEVEL');
  });

  it('should read the dispatch settings', () => {
    expect(load({ ...valid, DISPATCHER_ID: 'd1', DISPATCH_CLAIM_MS: '5000', DISPATCH_MAX_LANES: '8' }).dispatch).toMatchObject({ dispatcherId: 'd1', claimMs: 5_000, maxLanes: 8 });
  });

  it('should refuse a claim shorter than a second', () => {
    expect(failure({ ...valid, DISPATCH_CLAIM_MS: '10' }).variable).toBe('DISPATCH_CLAIM_MS');
  });
});
