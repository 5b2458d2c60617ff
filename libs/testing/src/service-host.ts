import type { INestApplicationContext } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { ConfigError } from '@gw/platform';
import { DataSource } from 'typeorm';
import { testDatabaseUrl, testNatsUrl } from './services';

/** The ConfigError `load` throws; fails the test when it throws nothing or something else. */
export function configErrorOf(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

/** A valid DATABASE_URL and NATS_URL: the least a background service's environment must give. */
export const validServiceHostEnv = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/gateway', NATS_URL: 'nats://127.0.0.1:4222' };

/**
 * The host settings every background service reads (DATABASE_URL, NATS_URL, HEALTH_PORT, LOG_LEVEL):
 * registers a test for each way they can be wrong, against the service's own config loader.
 */
export function itRefusesABadServiceHostEnv(load: (env: Record<string, string | undefined>) => unknown): void {
  const valid = validServiceHostEnv;
  const failure = (env: Record<string, string | undefined>) => configErrorOf(() => load(env));

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
}

/** The host settings of a service under test: this machine's Postgres and NATS, a random health port. */
export interface TestServiceHost {
  databaseUrl: string;
  natsUrl: string;
  healthPort: number;
  healthHost: string;
  logLevel: 'silent';
  logFormat: 'json';
}

/** What a started background service answers (the shape of service-host's RunningService). */
export interface RunningServiceUnderTest {
  app: INestApplicationContext;
  healthPort: number;
  close(): Promise<void>;
}

/**
 * What every background service started on the service host must do: give Nest the DataSource and
 * the Bus, answer liveness and readiness, and release its port and connections on close. Registers
 * the suite's hooks and tests; they are skipped where no NATS is available.
 */
export function itRunsAsABackgroundService(start: (host: TestServiceHost) => Promise<RunningServiceUnderTest>): void {
  let sut: RunningServiceUnderTest | undefined;
  let base = '';

  beforeAll(async () => {
    const natsUrl = await testNatsUrl();
    if (!natsUrl) return;
    sut = await start({ databaseUrl: await testDatabaseUrl(), natsUrl, healthPort: 0, healthHost: '127.0.0.1', logLevel: 'silent', logFormat: 'json' });
    base = `http://127.0.0.1:${sut.healthPort}`;
  });
  afterAll(() => sut?.close());

  it('should provide the DataSource and the Bus to Nest', () => {
    if (!sut) return;
    expect(sut.app.get(DataSource).isInitialized).toBe(true);
    expect(sut.app.get(Bus)).toBeInstanceOf(Bus);
  });

  it('should answer liveness and readiness', async () => {
    if (!sut) return;
    const live = await fetch(`${base}/health`);
    expect(live.status).toBe(200);
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { postgres: 'ok', nats: 'ok' } });
  });

  it('should answer its version on /health and its metrics on /metrics', async () => {
    if (!sut) return;
    const live = await fetch(`${base}/health`);
    expect(await live.json()).toEqual({ status: 'ok', version: expect.stringMatching(/^\d+\.\d+\.\d+/), commit: expect.any(String) });
    const scraped = await fetch(`${base}/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scraped.text();
    // This service's pool, and prom-client's process metrics.
    expect(text).toMatch(/^wa_gateway_db_pool_connections\{state="total"\} [1-9]/m);
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('should release the health port and its connections on close', async () => {
    if (!sut) return;
    const running = sut;
    sut = undefined;
    await running.close();
    await expect(fetch(`${base}/health`)).rejects.toThrow();
    expect(running.app.get(DataSource).isInitialized).toBe(false);
  });
}
