import { connect, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { InProcessBus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import { DeliveryRepository, InstanceRepository, WebhookRepository, type WebhookRow } from '@gw/persistence';
import { metrics, SsrfGuard } from '@gw/platform';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { RabbitMqTransport, type WebhookRelayConfig } from '@gw/relay';
import { addSink, emitEvents, failedAttemptSeen, sinkRelay, sinkRelayConfig } from './support/sink-fixtures';
import { firstOccurrences, TcpProxy, waitFor } from './support/tcp-proxy';

const AMQP = process.env.RABBITMQ_TEST_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/**
 * The RabbitMQ sink against the machine's real RabbitMQ (through a loopback proxy the test can cut):
 * the same relay as webhooks (fan-out, lanes, retries, disabling), publishing with confirms.
 */
describe('RabbitMQ event sink', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let consumer: ChannelModel;
  const bus = new InProcessBus();
  const instances = [`ra${Math.random().toString(16).slice(2, 12)}`, `rb${Math.random().toString(16).slice(2, 12)}`];
  const exchange = `test-sink-${Math.random().toString(16).slice(2, 10)}`;
  const received: ConsumeMessage[] = [];

  const emit = (instanceId: string, from: number, count: number) => emitEvents(db, instanceId, from, count);
  const add = (url: string, instanceId: string | null) =>
    addSink(db, 'rabbitmq', `s${Math.random().toString(16).slice(2, 10)}`, instanceId, url, {
      exchange,
      exchangeType: 'topic',
      routingKey: '{instance}.{event}',
    });

  beforeAll(async () => {
    db = await openTestDatabase();
    for (const id of instances) await new InstanceRepository(db.dataSource).create({ id, token: `tok-${id}`, name: id });
    proxy = await new TcpProxy('127.0.0.1', 5672).start();
    consumer = await connect(AMQP);
    const channel = await consumer.createChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(queue, exchange, '#');
    await channel.consume(queue, (message) => message && received.push(message), { noAck: true });
  });
  afterAll(async () => {
    await consumer?.close().catch(() => undefined);
    await proxy?.stop();
    await db?.close();
  });

  it('publishes every event with its stable id, in order per instance, through a broker outage', async () => {
    const sink = await add(`amqp://guest:guest@${proxy.url}/`, null);
    const sut = sinkRelay(db, sinkRelayConfig(), bus);
    sut.start();
    await emit(instances[0], 0, 15);
    await emit(instances[1], 0, 15);
    await waitFor(() => received.length >= 10, 15_000, 'first deliveries');

    // The broker goes away mid-stream; events keep coming; it comes back.
    await proxy.cut();
    await emit(instances[0], 15, 15);
    await emit(instances[1], 15, 15);
    await waitFor(() => failedAttemptSeen(db, { global: true }, 'rabbitmq'), 15_000, 'a failed attempt during the outage');
    await proxy.restore();
    await emit(instances[0], 30, 10);
    await emit(instances[1], 30, 10);

    const ids: Array<{ id: string; instance_id: string }> = await db.dataSource.query(
      `SELECT id::text, instance_id FROM outbox_events WHERE instance_id = ANY($1) AND event_type = 'messages' ORDER BY id`,
      [instances],
    );
    expect(ids).toHaveLength(80);
    await waitFor(() => new Set(received.map((message) => message.properties.messageId)).size >= 80, 30_000, 'every event');
    await sut.stop();

    const unique = firstOccurrences(received, (message) => message.properties.messageId as string);
    expect(new Set(unique.map((message) => message.properties.messageId))).toEqual(new Set(ids.map((row) => `evt_${row.id}`)));
    for (const instanceId of instances) {
      const mine = unique.filter((message) => message.properties.headers?.instanceId === instanceId);
      expect(mine.map((message) => JSON.parse(message.content.toString()).n)).toEqual(Array.from({ length: 40 }, (_, n) => n));
      expect(mine.every((message) => message.fields.routingKey === `${instanceId}.messages`)).toBe(true);
    }
    const [first] = unique;
    expect(first.properties).toMatchObject({ contentType: 'application/json', deliveryMode: 2, type: 'messages', appId: 'wa-gateway' });
    expect(JSON.parse(first.content.toString())).toMatchObject({ BaseUrl: 'http://gateway.test', EventType: 'messages' });

    // Counted by kind and outcome on /metrics.
    const exposition = (await metrics().exposition()).body;
    expect(exposition).toMatch(/wa_gateway_sink_deliveries_total\{kind="rabbitmq",outcome="delivered"\} [1-9]/);
    expect(exposition).toMatch(/wa_gateway_sink_deliveries_total\{kind="rabbitmq",outcome="error"\} [1-9]/);

    // The outage was seen and recorded like a webhook's, with the password masked.
    const errors = await new DeliveryRepository(db.dataSource).recentErrors({ global: true }, 20, 'rabbitmq');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0].url).toContain('amqp://guest:***@');
    expect(errors[0].url).not.toContain('guest:guest');
    expect(await new DeliveryRepository(db.dataSource).recentErrors({ global: true })).toEqual([]);
    const pending: Array<{ n: number }> = await db.dataSource.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status <> 'delivered'`,
      [sink.id],
    );
    expect(pending[0].n).toBe(0);
    await new WebhookRepository(db.dataSource).delete(null, sink.id, 'rabbitmq');
  });

  it('keeps what a stopped relay could not publish, and a relay started after the outage publishes it in order', async () => {
    const cutProxy = await new TcpProxy('127.0.0.1', 5672).start();
    await cutProxy.cut();
    const sink = await add(`amqp://guest:guest@127.0.0.1:${cutProxy.port}/`, instances[0]);
    const relay = () => sinkRelay(db, sinkRelayConfig(), bus);
    const first = relay();
    first.start();
    await emit(instances[0], 200, 10);
    await waitFor(() => failedAttemptSeen(db, { instanceId: instances[0] }, 'rabbitmq'), 15_000, 'a failed attempt');
    await first.stop();
    const before = received.length;
    await cutProxy.restore();
    const second = relay();
    second.start();
    const mine = () =>
      firstOccurrences(
        received.slice(before).filter((message) => JSON.parse(message.content.toString()).n >= 200),
        (message) => message.properties.messageId as string,
      );
    await waitFor(() => mine().length >= 10, 15_000, 'the events after the restart');
    await second.stop();
    await cutProxy.stop();
    expect(mine().map((message) => JSON.parse(message.content.toString()).n)).toEqual(Array.from({ length: 10 }, (_, n) => 200 + n));
    await new WebhookRepository(db.dataSource).delete(instances[0], sink.id, 'rabbitmq');
  });

  it('writes the global sink env names when it starts, and removes it once env no longer names it', async () => {
    const repository = new WebhookRepository(db.dataSource);
    const relayWith = (envSinks: WebhookRelayConfig['envSinks']) => sinkRelay(db, sinkRelayConfig({ envSinks }), bus);
    const named = {
      kind: 'rabbitmq' as const,
      url: `amqp://guest:guest@${proxy.url}/`,
      options: { exchange, exchangeType: 'topic', routingKey: 'env.{event}' },
      enabled: true,
      events: ['presence'],
      excludeMessages: [],
      addUrlEvents: false,
      addUrlTypesMessages: false,
      includeToken: false,
    };
    const sut = relayWith([{ id: 'env-rabbitmq', values: named }]);
    sut.start();
    await waitFor(async () => (await repository.listFor(null, 'rabbitmq')).length === 1, 5_000, 'env sink written');
    await emitEvents(db, instances[1], 0, 1, () => ({ eventType: 'presence' }));
    await waitFor(() => received.some((message) => message.fields.routingKey === 'env.presence'), 15_000, 'delivered through the env sink');
    await sut.stop();
    expect((await repository.listFor(null, 'rabbitmq'))[0]).toMatchObject({ id: 'env-rabbitmq', instanceId: null, events: ['presence'] });
    const again = relayWith([{ id: 'env-rabbitmq', values: null }]);
    again.start();
    await waitFor(async () => (await repository.listFor(null, 'rabbitmq')).length === 0, 5_000, 'env sink removed');
    await again.stop();
  });

  it('disables a sink that keeps failing and says so with a webhook Disabled event (credentials masked)', async () => {
    const down = await new TcpProxy('127.0.0.1', 5672).start();
    await down.cut();
    const sink = await add(`amqp://guest:s3cret@127.0.0.1:${down.port}/`, instances[0]);
    const sut = sinkRelay(db, sinkRelayConfig({ disableAfterMs: 300 }), bus);
    sut.start();
    await emit(instances[0], 100, 1);
    await waitFor(async () => (await new WebhookRepository(db.dataSource).byId(sink.id))?.enabled === false, 15_000, 'sink disabled');
    await sut.stop();
    const events: Array<{ payload: Record<string, any> }> = await db.dataSource.query(
      `SELECT payload FROM outbox_events WHERE event_type = 'webhook' AND payload->'webhook'->>'id' = $1`,
      [sink.id],
    );
    expect(events).toHaveLength(1);
    expect(events[0].payload.webhook.url).toBe(`amqp://guest:***@127.0.0.1:${down.port}/`);
    expect(events[0].payload.webhook.reason).toMatch(/^failing since/);
    const errors = await new DeliveryRepository(db.dataSource).recentErrors({ instanceId: instances[0] }, 20, 'rabbitmq');
    expect(errors[0].error).toMatch(/ECONNREFUSED/);
    expect(JSON.stringify(errors)).not.toContain('s3cret');
  });

  it('closes a broker connection no sink has used for a while (a deleted or moved sink leaves none behind)', async () => {
    const sut = new RabbitMqTransport({ ssrf: SsrfGuard.fromList('127.0.0.0/8'), requestTimeoutMs: 2_000, connectionIdleMs: 300 });
    const own = await new TcpProxy('127.0.0.1', 5672).start();
    try {
      const target = { kind: 'rabbitmq', url: `amqp://guest:guest@${own.url}/`, options: { exchange } } as unknown as WebhookRow;
      const message = {
        id: 'evt_idle',
        event: { id: '1', instanceId: instances[0], eventType: 'presence', chatId: '', payload: {} },
        body: '{}',
      };
      expect(await sut.send(target, message)).toEqual({ ok: true, statusCode: 0 });
      expect(sut.openConnections).toBe(1);
      expect(own.openSockets).toBeGreaterThan(0);
      await waitFor(() => sut.openConnections === 0 && own.openSockets === 0, 5_000, 'the idle connection closed');
      // Used again: a new connection.
      expect(await sut.send(target, { ...message, id: 'evt_idle2' })).toEqual({ ok: true, statusCode: 0 });
      expect(sut.openConnections).toBe(1);
    } finally {
      await sut.close();
      await own.stop();
    }
  });

  it('opens a new connection after one that broke, even when it broke before its open was done', async () => {
    const sut = new RabbitMqTransport({ ssrf: SsrfGuard.fromList('127.0.0.0/8'), requestTimeoutMs: 2_000 });
    const url = `amqp://guest:guest@${proxy.url}/`;
    const target = { kind: 'rabbitmq', url, options: { exchange } } as unknown as WebhookRow;
    const message = (id: string) => ({
      id,
      event: { id: '1', instanceId: instances[0], eventType: 'presence', chatId: '', payload: {} },
      body: '{}',
    });
    type Link = { broken: boolean; channel: { close(): Promise<void> } };
    const pool = (sut as unknown as { links: { get(key: string): Promise<Link> } }).links;
    try {
      expect(await sut.send(target, message('evt_b1'))).toEqual({ ok: true, statusCode: 0 });
      // As when the close came in while the link was still opening: marked broken, and its channel goes.
      const link = await pool.get(url);
      link.broken = true;
      await link.channel.close();
      await sut.send(target, message('evt_b2'));
      expect(await sut.send(target, message('evt_b3'))).toEqual({ ok: true, statusCode: 0 });
      expect(await pool.get(url)).not.toBe(link);
    } finally {
      await sut.close();
    }
  });

  it('closes its connection at once when the sink is deleted or disabled', async () => {
    const own = await new TcpProxy('127.0.0.1', 5672).start();
    const sut = sinkRelay(db, sinkRelayConfig(), bus);
    const webhooks = new WebhookRepository(db.dataSource);
    const delivered = async (id: string) =>
      (
        (await db.dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'delivered'`, [id])) as Array<{
          n: number;
        }>
      )[0].n;
    try {
      sut.start();
      for (const change of ['deleted', 'disabled'] as const) {
        const sink = await add(`amqp://guest:guest@${own.url}/`, instances[1]);
        await emit(instances[1], 300, 1);
        await waitFor(async () => (await delivered(sink.id)) === 1, 15_000, `${change}: the sink delivering`);
        expect(own.openSockets).toBeGreaterThan(0);
        if (change === 'deleted') await webhooks.delete(instances[1], sink.id, 'rabbitmq');
        else await webhooks.update(instances[1], sink.id, { ...sink, enabled: false });
        bus.publish(Subjects.sinksChanged, {});
        await waitFor(() => own.openSockets === 0, 1_000, `the connection closed after the sink was ${change}`);
      }
    } finally {
      await sut.stop();
      await own.stop();
    }
  });
});
