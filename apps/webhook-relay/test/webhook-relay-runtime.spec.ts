import { Bus } from '@gw/bus';
import { createLogger, EnvReader } from '@gw/platform';
import { readWebhookRelayConfig } from '@gw/relay';
import { testDatabaseUrl, testNatsUrl } from '@gw/testing';
import { DataSource } from 'typeorm';
import { startWebhookRelay, type RunningWebhookRelay } from '../src/runtime';

describe(startWebhookRelay.name, () => {
  let sut: RunningWebhookRelay | undefined;
  let base = '';

  beforeAll(async () => {
    const natsUrl = await testNatsUrl();
    if (!natsUrl) return;
    sut = await startWebhookRelay(
      { databaseUrl: await testDatabaseUrl(), natsUrl, healthPort: 0, healthHost: '127.0.0.1', logLevel: 'silent', delivery: readWebhookRelayConfig(new EnvReader({})) },
      createLogger('webhook-relay', 'silent'),
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
