import { Bus } from '@gw/bus';
import { ASYNC_DISPATCHER_DEFAULTS } from '@gw/dispatch';
import { createLogger } from '@gw/platform';
import { testDatabaseUrl, testNatsUrl } from '@gw/testing';
import { DataSource } from 'typeorm';
import { startDispatcher, type RunningDispatcher } from '../src/runtime';

describe(startDispatcher.name, () => {
  let sut: RunningDispatcher | undefined;
  let base = '';

  beforeAll(async () => {
    const natsUrl = await testNatsUrl();
    if (!natsUrl) return;
    sut = await startDispatcher(
      { databaseUrl: await testDatabaseUrl(), natsUrl, healthPort: 0, healthHost: '127.0.0.1', logLevel: 'silent', dispatch: { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: 'runtime-test' }, retention: { retentionDays: 7, intervalMs: 3_600_000 } },
      createLogger('dispatcher', 'silent'),
    );
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

  it('should release the health port and its connections on close', async () => {
    if (!sut) return;
    const running = sut;
    sut = undefined;
    await running.close();
    await expect(fetch(`${base}/health`)).rejects.toThrow();
    expect(running.app.get(DataSource).isInitialized).toBe(false);
  });
});
