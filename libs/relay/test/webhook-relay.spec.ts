import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InProcessBus } from '@gw/bus';
import { DeliveryRepository, InstanceRepository, OutboxRepository, WebhookRepository } from '@gw/persistence';
import { createLogger, SsrfGuard } from '@gw/platform';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, WEBHOOK_RELAY_DEFAULTS, WebhookRelay, type WebhookRelayConfig } from '@gw/relay';
import type { DataSource } from 'typeorm';

/** The relay's repositories on a DataSource, as WebhookRelayModule injects them from PersistenceModule. */
const repositoriesOf = (dataSource: DataSource) =>
  [new DeliveryRepository(dataSource), new WebhookRepository(dataSource), new InstanceRepository(dataSource)] as const;

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A loopback receiver whose answer the test controls. */
async function startReceiver() {
  const received: Received[] = [];
  let answer: (request: Received) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 });
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const entry = { path: request.url ?? '', headers: request.headers, body };
      const { status, headers } = answer(entry);
      if (status >= 200 && status < 300) received.push(entry);
      response.writeHead(status, headers ?? {});
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    answer: (fn: typeof answer) => (answer = fn),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

describe(WebhookRelay.name, () => {
  let db: TestDatabase;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const bus = new InProcessBus();
  const logger = createLogger('relay-test', 'silent');
  const config = (overrides: Partial<WebhookRelayConfig> = {}): WebhookRelayConfig => ({
    ...WEBHOOK_RELAY_DEFAULTS,
    publicBaseUrl: 'http://gateway.test',
    includeToken: false,
    retryScheduleMs: [50, 50, 50],
    pollIntervalMs: 20,
    claimMs: 500,
    ssrf: SsrfGuard.fromList('127.0.0.0/8'),
    ...overrides,
  });

  let instanceId = '';
  let secret = '';
  const emit = async (events: Array<{ type: string; chat?: string; payload: Record<string, unknown> }>) => {
    await db.dataSource.transaction(async (manager) => {
      await new OutboxRepository(db.dataSource).within(manager).insert(
        instanceId,
        events.map((event) => ({ eventType: event.type, chatId: event.chat ?? '', payload: event.payload })),
      );
    });
  };
  const addWebhook = async (
    values: Partial<{ url: string; events: string[]; excludeMessages: string[]; addUrlEvents: boolean; includeToken: boolean; instanceId: string | null }> = {},
  ) => {
    secret = generateWebhookSecret();
    return new WebhookRepository(db.dataSource).insert(
      `w${Math.random().toString(16).slice(2, 10)}`,
      values.instanceId === undefined ? instanceId : values.instanceId,
      {
        url: values.url ?? receiver.url,
        enabled: true,
        events: values.events ?? [],
        excludeMessages: values.excludeMessages ?? [],
        addUrlEvents: values.addUrlEvents ?? false,
        addUrlTypesMessages: false,
        includeToken: values.includeToken ?? false,
      },
      secret,
    );
  };

  beforeEach(async () => {
    db = await openTestDatabase();
    receiver = await startReceiver();
    instanceId = `r${Math.random().toString(16).slice(2, 16)}`;
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: `tok-${instanceId}`, name: 'relay' });
  });
  afterEach(async () => {
    await receiver.close();
    await db.close();
  });

  it('should deliver signed envelopes a Standard Webhooks receiver verifies', async () => {
    await addWebhook();
    const sut = new WebhookRelay(...repositoriesOf(db.dataSource), bus, config(), logger);
    await emit([{ type: 'connection', payload: { EventType: 'connection', instance: { name: 'x', status: 'connected' }, instanceName: 'x', owner: '55' } }]);
    sut.start();
    await waitFor(() => receiver.received.length === 1);
    await sut.stop();
    const [delivery] = receiver.received;
    const verified = new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>) as Record<string, unknown>;
    expect(verified).toMatchObject({ BaseUrl: 'http://gateway.test', EventType: 'connection', instanceName: 'x' });
    expect(verified.token).toBeUndefined();
    expect(delivery.headers['webhook-id']).toMatch(/^evt_\d+$/);
  });

  it('should warm up before it starts: every pooled connection open and planned, nothing claimed or written', async () => {
    await addWebhook();
    await emit([{ type: 'connection', payload: { EventType: 'connection', instance: { name: 'x', status: 'connected' }, instanceName: 'x', owner: '55' } }]);
    const [deliveries, webhooks, instances] = repositoriesOf(db.dataSource);
    const pool = (db.dataSource.driver as unknown as { master: { totalCount: number; idleCount: number } }).master;
    const warnings = jest.spyOn(logger, 'warn');
    const sut = new WebhookRelay(deliveries, webhooks, instances, bus, config(), logger);

    await sut.warmUp();

    // The test database's pool holds 5: all open (each planned the relay's statements: an EXPLAIN that failed would warn) and given back.
    expect(pool.totalCount).toBe(5);
    expect(pool.idleCount).toBe(5);
    expect(warnings).not.toHaveBeenCalled();
    // EXPLAIN only: the event is still undispatched and nothing was claimed.
    expect(await deliveries.countByStatus()).toEqual({});
    sut.start();
    await waitFor(() => receiver.received.length === 1);
    await sut.stop();
  });

  it('should include the token only when the webhook asks for it', async () => {
    await addWebhook({ includeToken: true });
    const sut = new WebhookRelay(...repositoriesOf(db.dataSource), bus, config(), logger);
    await emit([{ type: 'connection', payload: { EventType: 'connection' } }]);
    sut.start();
    await waitFor(() => receiver.received.length === 1);
    await sut.stop();
    expect(JSON.parse(receiver.received[0].body).token).toBe(`tok-${instanceId}`);
  });

  it('should keep everything through a receiver outage and deliver in order afterwards', async () => {
    await addWebhook();
    let down = true;
    receiver.answer(() => ({ status: down ? 503 : 200 }));
    const sut = new WebhookRelay(...repositoriesOf(db.dataSource), bus, config({ retryScheduleMs: [30, 30, 30, 30, 30, 30, 30, 30, 30, 30] }), logger);
    await emit(Array.from({ length: 10 }, (_, n) => ({ type: 'messages', chat: 'chat-a', payload: { EventType: 'messages', n } })));
    sut.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.received).toHaveLength(0);
    down = false;
    await waitFor(() => receiver.received.length === 10);
    await sut.stop();
    expect(receiver.received.map((entry) => JSON.parse(entry.body).n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const errors = await new DeliveryRepository(db.dataSource).recentErrors({ instanceId });
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toMatchObject({ event: 'messages', statusCode: 503 });
  });

  it('should apply event filters and URL suffixes', async () => {
    await addWebhook({ events: ['messages'], excludeMessages: ['fromMeYes'], addUrlEvents: true });
    const sut = new WebhookRelay(...repositoriesOf(db.dataSource), bus, config(), logger);
    await emit([
      { type: 'connection', payload: { EventType: 'connection' } },
      { type: 'messages', payload: { EventType: 'messages', message: { fromMe: true, id: 'mine' } } },
      { type: 'messages', payload: { EventType: 'messages', message: { fromMe: false, id: 'theirs' } } },
    ]);
    sut.start();
    await waitFor(() => receiver.received.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await sut.stop();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0].path).toBe('/messages');
    expect(JSON.parse(receiver.received[0].body).message.id).toBe('theirs');
  });

  it('should deliver every instance event to the global webhook too', async () => {
    await addWebhook({ instanceId: null, url: `${receiver.url}/global` });
    await addWebhook();
    const sut = new WebhookRelay(...repositoriesOf(db.dataSource), bus, config(), logger);
    await emit([{ type: 'presence', payload: { EventType: 'presence' } }]);
    sut.start();
    await waitFor(() => receiver.received.length === 2);
    await sut.stop();
    expect(receiver.received.map((entry) => entry.path).sort()).toEqual(['/', '/global']);
  });

  it('should disable a webhook whose receiver answers 410', async () => {
    const webhook = await addWebhook();
    receiver.answer(() => ({ status: 410 }));
    const sut = new WebhookRelay(...repositoriesOf(db.dataSource), bus, config(), logger);
    await emit([{ type: 'connection', payload: { EventType: 'connection' } }]);
    sut.start();
    await waitFor(async () => (await new WebhookRepository(db.dataSource).byId(webhook.id))?.enabled === false);
    await sut.stop();
    const events: Array<{ payload: Record<string, any> }> = await db.dataSource.query(`SELECT payload FROM outbox_events WHERE event_type = 'webhook'`);
    expect(events.map((event) => event.payload)).toEqual([
      {
        EventType: 'webhook',
        type: 'Disabled',
        webhook: { id: webhook.id, url: receiver.url, global: false, reason: '410 Gone from the receiver', failingSince: null },
        instanceName: 'relay',
        owner: '',
      },
    ]);
  });

  it('should disable a webhook failing for longer than disableAfterMs with one webhook Disabled event, delivered to the other webhooks', async () => {
    const failing = await addWebhook({ url: `${receiver.url}/failing` });
    const globalSecret = generateWebhookSecret();
    const global = await new WebhookRepository(db.dataSource).insert(
      `g${Math.random().toString(16).slice(2, 10)}`,
      null,
      {
        url: `${receiver.url}/global`,
        enabled: true,
        events: ['webhook'],
        excludeMessages: [],
        addUrlEvents: false,
        addUrlTypesMessages: false,
        includeToken: false,
      },
      globalSecret,
    );
    receiver.answer((request) => ({ status: request.path === '/failing' ? 503 : 200 }));
    const sut = new WebhookRelay(
      ...repositoriesOf(db.dataSource),
      bus,
      config({ retryScheduleMs: Array.from({ length: 200 }, () => 20), disableAfterMs: 300 }),
      logger,
    );
    await emit([{ type: 'connection', payload: { EventType: 'connection' } }]);
    sut.start();
    await waitFor(() => receiver.received.some((entry) => entry.path === '/global'), 30_000);
    await sut.stop();

    const row = await new WebhookRepository(db.dataSource).byId(failing.id);
    expect(row?.enabled).toBe(false);
    expect(row?.disabledReason).toMatch(/^failing since \d{4}-/);
    const delivered = receiver.received.filter((entry) => entry.path === '/global');
    expect(delivered).toHaveLength(1);
    expect(global.id).toBeDefined();
    const event = new Webhook(globalSecret).verify(delivered[0].body, delivered[0].headers as Record<string, string>) as Record<string, any>;
    expect(event).toEqual({
      BaseUrl: 'http://gateway.test',
      EventType: 'webhook',
      type: 'Disabled',
      webhook: {
        id: failing.id,
        url: `${receiver.url}/failing`,
        global: false,
        reason: row?.disabledReason,
        failingSince: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
      instanceName: 'relay',
      owner: '',
    });
    expect(row?.disabledReason).toBe(`failing since ${event.webhook.failingSince}`);
    // Written once, in the transaction that disabled it.
    const count: Array<{ n: number }> = await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_events WHERE event_type = 'webhook'`);
    expect(count[0].n).toBe(1);
  });

  it('should send a delivery again with the same webhook-id after a relay died mid-request', async () => {
    await addWebhook();
    await emit([{ type: 'connection', payload: { EventType: 'connection' } }]);
    // The "dead" relay: claims the delivery and never finishes it.
    const deliveries = new DeliveryRepository(db.dataSource);
    await deliveries.fanOut(10, (_event, webhooks) => webhooks);
    const [lost] = await deliveries.claimDue(10, 200);
    expect(lost).toBeDefined();
    const sut = new WebhookRelay(...repositoriesOf(db.dataSource), bus, config(), logger);
    sut.start();
    await waitFor(() => receiver.received.length === 1);
    await sut.stop();
    expect(receiver.received[0].headers['webhook-id']).toBe(`evt_${lost.event.id}`);
  });

  it('should refuse a receiver on a private address unless allowlisted', async () => {
    await addWebhook();
    const sut = new WebhookRelay(...repositoriesOf(db.dataSource), bus, config({ ssrf: new SsrfGuard(), retryScheduleMs: [] }), logger);
    await emit([{ type: 'connection', payload: { EventType: 'connection' } }]);
    sut.start();
    const repo = new DeliveryRepository(db.dataSource);
    await waitFor(async () => (await repo.countByStatus()).failed === 1);
    await sut.stop();
    expect(receiver.received).toHaveLength(0);
    const [error] = await repo.recentErrors({ instanceId });
    expect(error.error).toMatch(/SSRF/);
  });
});
