import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeliveryRepository, InstanceRepository, OutboxRepository, WebhookRepository } from '@gw/persistence';
import { createLogger, SsrfGuard } from '@gw/platform';
import { WEBHOOK_RELAY_DEFAULTS, WebhookRelay } from '@gw/relay';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

interface Received {
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
  status: number;
}

/** A loopback webhook receiver: answers 503 to the events `failing` names, 200 to the rest; keeps every request. */
async function startReceiver() {
  const requests: Received[] = [];
  const failing = new Set<string>();
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      const body = JSON.parse(text) as Record<string, any>;
      const status = failing.has(String(body.n)) ? 503 : 200;
      requests.push({ headers: request.headers, body, status });
      response.writeHead(status);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests,
    failing,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const waitFor = async <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not in time (last: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/**
 * The delivery log and replay through HTTP (issue #40), with the real relay and a loopback receiver:
 * a delivered event, a failing-then-retrying one, a replay received with the same `webhook-id` and
 * shown as a replay; an instance sees and replays only its own; the admin's scope; validation; audit.
 */
describe('delivery log and replay (GET /webhook/deliveries, POST /webhook/replay, admin)', () => {
  let gw: GatewayHarness;
  let relay: WebhookRelay;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let first: { id: string; token: string };
  let second: { id: string; token: string };
  let hook = '';
  let otherHook = '';
  const events: Record<string, string> = {};

  const emit = async (instanceId: string, n: string, eventType = 'messages') =>
    gw.db.dataSource.transaction(
      async (manager) =>
        (await new OutboxRepository(gw.db.dataSource)
          .within(manager)
          .insert(instanceId, [{ eventType, chatId: `chat-${n}`, payload: { EventType: eventType, n } }])) as string,
    );
  const deliveries = async (token: string, query = '') => (await gw.call('GET', `/webhook/deliveries${query}`, { token })).body.deliveries as any[];
  const deliveryOf = async (token: string, eventId: string) => (await deliveries(token, `?eventId=${eventId}`))[0];

  beforeAll(async () => {
    gw = await startGateway({ env: { SSRF_ALLOWLIST: '127.0.0.0/8' } });
    receiver = await startReceiver();
    first = await gw.createInstance('log-one');
    second = await gw.createInstance('log-two');
    hook = (await gw.call('POST', '/webhook', { token: first.token, body: { url: receiver.url, events: ['messages', 'connection'] } })).body[0].id;
    otherHook = (await gw.call('POST', '/webhook', { token: second.token, body: { url: `${receiver.url}?two`, events: ['messages'] } })).body[0].id;
    relay = new WebhookRelay(
      new DeliveryRepository(gw.db.dataSource),
      new WebhookRepository(gw.db.dataSource),
      new InstanceRepository(gw.db.dataSource),
      gw.bus,
      {
        ...WEBHOOK_RELAY_DEFAULTS,
        publicBaseUrl: 'http://gw.test',
        includeToken: false,
        retryScheduleMs: [300, 300, 300, 300, 300, 300, 300, 300],
        pollIntervalMs: 50,
        ssrf: SsrfGuard.fromList('127.0.0.0/8'),
      },
      createLogger('delivery-log-e2e', 'silent'),
    );
    relay.start();
    receiver.failing.add('retrying');
    events.delivered = await emit(first.id, 'delivered');
    events.retrying = await emit(first.id, 'retrying');
    events.ofSecond = await emit(second.id, 'second');
    await waitFor(
      () => deliveryOf(first.token, events.delivered),
      (row) => row?.outcome === 'delivered',
      'the first delivery',
    );
  }, 60_000);

  afterAll(async () => {
    await relay?.stop();
    await receiver?.close();
    await gw?.close();
  });

  it('should log a delivered event with its attempts, status, latency and attempt times', async () => {
    const row = await deliveryOf(first.token, events.delivered);
    expect(row).toMatchObject({
      kind: 'webhook',
      webhook_id: hook,
      sink_id: null,
      event_type: 'messages',
      instance_id: first.id,
      outcome: 'delivered',
      attempts: 1,
      last_status_code: 200,
      error: '',
      next_attempt_at: null,
      replayed: false,
    });
    expect(row.latency_ms).toEqual(expect.any(Number));
    expect(Date.parse(row.first_attempt_at)).toBeLessThanOrEqual(Date.parse(row.last_attempt_at));
  });

  it('should log a failing delivery as retrying with its status and next attempt, then delivered', async () => {
    const retrying = await waitFor(
      () => deliveryOf(first.token, events.retrying),
      (row) => row?.attempts >= 2,
      'two failed attempts',
    );
    expect(retrying).toMatchObject({ outcome: 'retrying', last_status_code: 503, error: 'receiver answered 503' });
    expect(Date.parse(retrying.next_attempt_at)).toBeGreaterThan(Date.parse(retrying.last_attempt_at) - 1);
    expect((await deliveries(first.token, '?outcome=retrying')).map((row) => row.event_id)).toEqual([events.retrying]);
    receiver.failing.delete('retrying');
    const done = await waitFor(
      () => deliveryOf(first.token, events.retrying),
      (row) => row?.outcome === 'delivered',
      'the retried delivery',
    );
    expect(done.attempts).toBeGreaterThanOrEqual(3);
  });

  it('should replay an event with its original webhook-id, and show it as a replay', async () => {
    const before = receiver.requests.filter((request) => request.body.n === 'delivered');
    expect(before).toHaveLength(1);
    const { status, body } = await gw.call('POST', '/webhook/replay', { token: first.token, body: { webhookId: hook, eventIds: [events.delivered] } });
    expect(status).toBe(200);
    expect(body).toEqual({ queued: 1, pending: 0, unavailable: 0 });
    const again = await waitFor(
      async () => receiver.requests.filter((request) => request.body.n === 'delivered'),
      (list) => list.length === 2,
      'the replayed request',
    );
    expect(again[1].headers['webhook-id']).toBe(before[0].headers['webhook-id']);
    expect(again[1].headers['webhook-id']).toBe(`evt_${events.delivered}`);
    const row = await waitFor(
      () => deliveryOf(first.token, events.delivered),
      (entry) => entry.outcome === 'delivered',
      'the replay delivered',
    );
    expect(row).toMatchObject({ replayed: true, replayed_by: first.id, attempts: 1 });
    // A window with no target named: every enabled target of the instance that takes the events.
    const windowed = await gw.call('POST', '/webhook/replay', {
      token: first.token,
      body: { from: new Date(Date.now() - 60_000).toISOString(), to: new Date().toISOString(), eventTypes: ['messages'] },
    });
    expect(windowed.body).toMatchObject({ unavailable: 0 });
    expect(windowed.body.queued + windowed.body.pending).toBe(2);
  });

  it('should keep each instance to its own deliveries and events, both ways', async () => {
    const own = await deliveries(second.token);
    expect(own.map((row) => row.event_id)).toEqual([events.ofSecond]);
    expect((await deliveries(first.token)).some((row) => row.event_id === events.ofSecond)).toBe(false);
    expect((await gw.call('GET', `/webhook/deliveries?webhookId=${hook}`, { token: second.token })).status).toBe(404);
    expect((await gw.call('GET', `/webhook/deliveries?webhookId=${otherHook}`, { token: first.token })).status).toBe(404);
    const foreignHook = await gw.call('POST', '/webhook/replay', { token: second.token, body: { webhookId: hook, eventIds: [events.delivered] } });
    expect(foreignHook).toEqual({ status: 404, body: { error: 'Webhook not found' } });
    // Its own webhook, another instance's event: nothing queued, the event counted as unavailable.
    const foreignEvent = await gw.call('POST', '/webhook/replay', { token: second.token, body: { webhookId: otherHook, eventIds: [events.delivered] } });
    expect(foreignEvent.body).toEqual({ queued: 0, pending: 0, unavailable: 1 });
    const back = await gw.call('POST', '/webhook/replay', { token: first.token, body: { webhookId: otherHook, eventIds: [events.ofSecond] } });
    expect(back.status).toBe(404);
    // The sinks' log lists sinks only: a webhook is no sink there, and the webhooks' filter is refused.
    expect((await gw.call('GET', '/sink/deliveries', { token: first.token })).body).toEqual({ deliveries: [], limit: 50, next_cursor: null });
    expect((await gw.call('GET', `/sink/deliveries?sinkId=${hook}`, { token: first.token })).status).toBe(404);
    expect((await gw.call('GET', `/sink/deliveries?webhookId=${hook}`, { token: first.token })).status).toBe(400);
  });

  it('should list every instance for the admin, one with `instance`, and replay as admin', async () => {
    const all = (await gw.call('GET', '/admin/deliveries', { admin: gw.adminToken })).body.deliveries as any[];
    expect(new Set(all.map((row) => row.instance_id))).toEqual(new Set([first.id, second.id]));
    const one = (await gw.call('GET', `/admin/deliveries?instance=${second.id}`, { admin: gw.adminToken })).body.deliveries as any[];
    expect(one.map((row) => row.event_id)).toEqual([events.ofSecond]);
    await waitFor(
      () => deliveryOf(second.token, events.ofSecond),
      (row) => row?.outcome === 'delivered',
      'the second instance delivered',
    );
    const replayed = await gw.call('POST', '/admin/webhook/replay', { admin: gw.adminToken, body: { webhookId: otherHook, eventIds: [events.ofSecond] } });
    expect(replayed.body).toEqual({ queued: 1, pending: 0, unavailable: 0 });
    const row = await waitFor(
      () => deliveryOf(second.token, events.ofSecond),
      (entry) => entry.replayed && entry.outcome === 'delivered',
      'the admin replay',
    );
    expect(row.replayed_by).toBe('admin');
    expect((await gw.call('POST', '/admin/webhook/replay', { admin: gw.adminToken, body: { instance: 'nope', eventIds: ['1'] } })).status).toBe(404);
    expect((await gw.call('GET', '/admin/deliveries', { token: first.token })).status).toBe(403);
  });

  it('should page with next_cursor, each delivery once', async () => {
    const whole = await deliveries(first.token, '?limit=500');
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 20; page++) {
      const { body } = await gw.call('GET', `/webhook/deliveries?limit=1${cursor}`, { token: first.token });
      seen.push(...body.deliveries.map((row: { id: string }) => row.id));
      if (!body.next_cursor) break;
      cursor = `&cursor=${body.next_cursor}`;
    }
    expect(seen).toEqual(whole.map((row) => row.id));
  });

  it('should refuse what it cannot replay or filter, with a clear 400', async () => {
    const replay = (body: unknown) => gw.call('POST', '/webhook/replay', { token: first.token, body });
    const now = Date.now();
    expect(await replay({ webhookId: hook })).toEqual({ status: 400, body: { error: 'give eventIds, or a window with both from and to' } });
    expect((await replay({ from: new Date(now).toISOString(), to: new Date(now - 1_000).toISOString() })).body).toEqual({ error: 'from must not be after to' });
    expect((await replay({ from: now - 8 * 86_400_000, to: now })).body.error).toMatch(/at most 7 days/);
    expect((await replay({ eventIds: Array.from({ length: 1_001 }, (_, i) => String(i + 1)) })).status).toBe(400);
    expect((await replay({ eventIds: ['x'] })).status).toBe(400);
    expect((await replay({ webhookId: hook, sinkId: 's', eventIds: ['1'] })).status).toBe(400);
    expect((await replay({ webhookId: 'nope', eventIds: ['1'] })).status).toBe(404);
    expect((await gw.call('GET', '/webhook/deliveries?outcome=lost', { token: first.token })).status).toBe(400);
    expect((await gw.call('GET', '/webhook/deliveries?from=2026-01-02&to=2026-01-01', { token: first.token })).status).toBe(400);
  });

  it('should record replays in the audit log', async () => {
    const own = (await gw.call('GET', '/instance/audit?action=webhook.replay', { token: first.token })).body.entries as any[];
    expect(own.length).toBeGreaterThanOrEqual(2);
    expect(own.at(-1)).toMatchObject({ actor: first.id, route: '/webhook/replay', status: 200, changes: { webhookId: hook } });
    const admin = (await gw.call('GET', '/admin/audit?action=admin.webhook.replay', { admin: gw.adminToken })).body.entries as any[];
    expect(admin[admin.length - 1]).toMatchObject({ actor: 'admin', route: '/admin/webhook/replay' });
  });
});
