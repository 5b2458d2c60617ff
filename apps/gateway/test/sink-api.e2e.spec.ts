import { connect, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { DeliveryRepository, InstanceRepository, WebhookRepository } from '@gw/persistence';
import { createLogger, SsrfGuard } from '@gw/platform';
import { WEBHOOK_RELAY_DEFAULTS, WebhookRelay } from '@gw/relay';
import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * The sink routes through HTTP (/sink/<kind> with the instance token, /globalsink/<kind> with the admin
 * token), and real traffic: a message a simulated friend sends reaches the machine's RabbitMQ and NATS
 * JetStream through sinks configured by the API, with real Baileys and the real relay.
 */
describe('event sinks API (HTTP) and real traffic to RabbitMQ and NATS', () => {
  const stack = new Stack();
  const suffix = Math.random().toString(16).slice(2, 10);
  const exchange = `e2e-sink-${suffix}`;
  const stream = `E2E_SINK_${suffix}`;
  let token: string;
  let owner: string;
  let relay: WebhookRelay;
  let amqp: ChannelModel;
  let nats: NatsConnection;
  const consumed: ConsumeMessage[] = [];
  const admin = () => stack.gw.adminToken;

  beforeAll(async () => {
    await stack.start({ PUBLIC_BASE_URL: 'https://gw.example' });
    ({ token, phone: owner } = await stack.connectedInstance('sinks'));
    relay = new WebhookRelay(
      new DeliveryRepository(stack.db.dataSource),
      new WebhookRepository(stack.db.dataSource),
      new InstanceRepository(stack.db.dataSource),
      stack.bus,
      {
        ...WEBHOOK_RELAY_DEFAULTS,
        publicBaseUrl: 'https://gw.example',
        includeToken: false,
        retryScheduleMs: [100, 100, 100],
        pollIntervalMs: 100,
        ssrf: SsrfGuard.fromList('127.0.0.0/8'),
      },
      createLogger('sink-e2e', 'silent'),
    );
    relay.start();
    amqp = await connect('amqp://guest:guest@127.0.0.1:5672');
    const channel = await amqp.createChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(queue, exchange, '#');
    await channel.consume(queue, (message) => message && consumed.push(message), { noAck: true });
    nats = await natsConnect({ servers: '127.0.0.1:4222' });
  }, 60_000);
  afterAll(async () => {
    await relay?.stop();
    await nats?.request(`$JS.API.STREAM.DELETE.${stream}`, '', { timeout: 2_000 }).catch(() => undefined);
    await nats?.close();
    await amqp?.close().catch(() => undefined);
    await stack.stop();
  });

  it('configures an instance RabbitMQ sink, masks its password, keeps it apart from /webhook', async () => {
    const created = await stack.gw.call('POST', '/sink/rabbitmq', {
      token,
      body: {
        url: 'amqp://guest:guest@127.0.0.1:5672/',
        exchange,
        routingKey: 'wa.{instance}.{event}',
        events: ['messages'],
        excludeMessages: ['wasSentByApi'],
      },
    });
    expect(created.status).toBe(200);
    expect(created.body).toHaveLength(1);
    expect(created.body[0]).toMatchObject({
      kind: 'rabbitmq',
      url: 'amqp://guest:***@127.0.0.1:5672/',
      exchange,
      exchangeType: 'topic',
      routingKey: 'wa.{instance}.{event}',
      events: ['messages'],
      excludeMessages: ['wasSentByApi'],
      enabled: true,
    });
    expect(JSON.stringify(created.body)).not.toContain('guest:guest');
    expect((await stack.gw.call('GET', '/webhook', { token })).body).toEqual([]);
    // The masked URL sent back keeps the stored credentials; only what the body names changes.
    const updated = await stack.gw.call('POST', '/sink/rabbitmq', { token, body: { url: 'amqp://guest:***@127.0.0.1:5672/', includeToken: false } });
    expect(updated.body[0]).toMatchObject({ url: 'amqp://guest:***@127.0.0.1:5672/', exchange, events: ['messages'] });
    const [row] = await new WebhookRepository(stack.db.dataSource).listFor(created.body[0].instance_id, 'rabbitmq');
    expect(row.url).toBe('amqp://guest:guest@127.0.0.1:5672/');
    expect((await stack.gw.call('GET', '/sink/rabbitmq', { token })).body).toHaveLength(1);
  });

  it('adds, updates and deletes sinks by id as /webhook does', async () => {
    const added = await stack.gw.call('POST', '/sink/kafka', { token, body: { action: 'add', url: 'kafka://127.0.0.1:9', topic: 'orders' } });
    expect(added.status).toBe(200);
    const id = added.body[0].id;
    expect(added.body[0]).toMatchObject({ kind: 'kafka', topic: 'orders', url: 'kafka://127.0.0.1:9' });
    const off = await stack.gw.call('POST', '/sink/kafka', { token, body: { action: 'update', id, enabled: false } });
    expect(off.body[0]).toMatchObject({ enabled: false, topic: 'orders' });
    expect((await stack.gw.call('POST', '/sink/nats', { token, body: { action: 'update', id, enabled: true } })).status).toBe(404);
    expect((await stack.gw.call('POST', '/sink/kafka', { token, body: { action: 'delete', id } })).body).toEqual([]);
    expect((await stack.gw.call('POST', '/sink/kafka', { token, body: { action: 'delete', id } })).status).toBe(404);
    expect((await stack.gw.call('POST', '/sink/kafka', { token, body: { action: 'delete' } })).status).toBe(400);
  });

  it("keeps each instance's sinks to its own token: another instance neither sees, changes, deletes nor reads the errors of them", async () => {
    const added = await stack.gw.call('POST', '/sink/kafka', { token, body: { action: 'add', url: 'kafka://owner:s3cret@127.0.0.1:9', topic: 'mine' } });
    const id = added.body[0].id as string;
    const otherToken = `tok-other-${suffix}`;
    await new InstanceRepository(stack.db.dataSource).create({ id: `rother${suffix}`, token: otherToken, name: 'other' });
    const other = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token: otherToken, body });
    expect((await other('GET', '/sink/kafka')).body).toEqual([]);
    expect((await other('POST', '/sink/kafka', { action: 'update', id, url: 'kafka://127.0.0.1:10', enabled: false })).status).toBe(404);
    expect((await other('POST', '/sink/kafka', { action: 'delete', id })).status).toBe(404);
    // The masked URL is no key to the stored credentials of someone else's sink.
    const own = await other('POST', '/sink/kafka', { url: 'kafka://owner:***@127.0.0.1:9' });
    expect(own.status).toBe(200);
    expect((await new WebhookRepository(stack.db.dataSource).find(`rother${suffix}`, own.body[0].id, 'kafka'))?.url).toBe('kafka://owner:***@127.0.0.1:9');
    // A failed attempt of the first instance's sink is in its error log, not in the other's.
    await stack.db.dataSource.query(
      `INSERT INTO webhook_errors (webhook_id, instance_id, global, url, event, attempts, error, payload, kind)
       VALUES ($1, $2, false, 'kafka://owner:***@127.0.0.1:9 topic=mine', 'messages', 1, 'connecting: ECONNREFUSED', '{}', 'kafka')`,
      [id, added.body[0].instance_id],
    );
    expect((await stack.gw.call('GET', '/sink/kafka/errors', { token })).body).toEqual([expect.objectContaining({ error: 'connecting: ECONNREFUSED' })]);
    expect((await other('GET', '/sink/kafka/errors')).body).toEqual([]);
    const [row] = (await new WebhookRepository(stack.db.dataSource).listFor(added.body[0].instance_id, 'kafka')).filter((entry) => entry.id === id);
    expect(row).toMatchObject({ enabled: true, url: 'kafka://owner:s3cret@127.0.0.1:9', options: { topic: 'mine' } });
    expect((await stack.gw.call('POST', '/sink/kafka', { token, body: { action: 'delete', id } })).status).toBe(200);
    await stack.gw.call('POST', '/sink/kafka', { token: otherToken, body: { action: 'delete', id: own.body[0].id } });
  });

  it.each([
    ['/sink/rabbitmq', { url: 'http://127.0.0.1:5672' }, /amqp:\/\/ or amqps:\/\//],
    ['/sink/rabbitmq', { url: 'amqp://10.0.0.5' }, /url refused: broker 10\.0\.0\.5:5672: .*private or reserved/],
    ['/sink/rabbitmq', { url: 'amqp://169.254.169.254' }, /private or reserved/],
    ['/sink/rabbitmq', { url: 'amqp://127.0.0.1', exchangeType: 'weird' }, /exchangeType must be one of/],
    ['/sink/rabbitmq', { url: 'amqp://127.0.0.1', exchange: 'a b' }, /exchange may contain only/],
    ['/sink/nats', { url: 'nats://127.0.0.1', subjectPrefix: 'a.>' }, /subjectPrefix must be/],
    ['/sink/nats', { url: 'nats://127.0.0.1', stream: 'A.B' }, /stream must be/],
    ['/sink/nats', { url: 'nats://127.0.0.1', subjectPrefix: 'instance.x' }, /subjectPrefix must not start with instance/],
    ['/sink/nats', { url: 'nats://127.0.0.1', subjectPrefix: 'events' }, /gateway's own bus/],
    ['/sink/nats', {}, /url is required/],
    ['/sink/kafka', { url: 'kafka://127.0.0.1', topic: 'a/b' }, /topic must be/],
    ['/sink/kafka', { url: 'kafka://127.0.0.1', events: ['nope'] }, /events must contain only/],
    ['/sink/kafka', { url: 'kafka://127.0.0.1', excludeMessages: ['sometimes'] }, /excludeMessages must contain only/],
    ['/sink/kafka', { url: 42 }, /url must be a string/],
  ])('refuses a bad %s body %j with a 400 naming the problem', async (path, body, message) => {
    const rows = async () => ((await stack.db.dataSource.query(`SELECT count(*)::int AS n FROM webhooks`)) as Array<{ n: number }>)[0].n;
    const before = await rows();
    const { status, body: answer } = await stack.gw.call('POST', path, { token, body: { action: 'add', ...body } });
    expect(status).toBe(400);
    expect(JSON.stringify(answer.error)).toMatch(message);
    expect(await rows()).toBe(before);
  });

  it('needs the instance token for /sink (401) and the admin token for /globalsink (403)', async () => {
    expect((await stack.gw.call('GET', '/sink/nats', {})).status).toBe(401);
    expect((await stack.gw.call('GET', '/globalsink/nats', { admin: 'wrong' })).status).toBe(403);
    expect((await stack.gw.call('GET', '/globalsink/nats', { token })).status).toBe(403);
    expect((await stack.gw.call('GET', '/globalsink', { token })).status).toBe(403);
    expect((await stack.gw.call('GET', '/globalwebhook/all', { token })).status).toBe(403);
  });

  it('configures, shows and deletes the global NATS sink (url and events required)', async () => {
    expect((await stack.gw.call('GET', '/globalsink/nats', { admin: admin() })).status).toBe(404);
    // The list forms answer what is set, an empty list rather than a 404 (the console reads them).
    const before = await stack.gw.call('GET', '/globalsink', { admin: admin() });
    expect([before.status, before.body.filter((sink: { kind: string }) => sink.kind === 'nats')]).toEqual([200, []]);
    expect((await stack.gw.call('POST', '/globalsink/nats', { admin: admin(), body: { url: 'nats://127.0.0.1:4222' } })).status).toBe(400);
    const configured = await stack.gw.call('POST', '/globalsink/nats', {
      admin: admin(),
      body: { url: 'nats://127.0.0.1:4222', events: ['messages'], subjectPrefix: `e2e.${suffix}`, stream },
    });
    expect(configured.status).toBe(200);
    expect(configured.body).toMatchObject({ kind: 'nats', subjectPrefix: `e2e.${suffix}`, stream, source: 'api', events: ['messages'] });
    expect(configured.body.instance_id).toBeUndefined();
    expect((await stack.gw.call('GET', '/globalsink/nats', { admin: admin() })).body).toMatchObject({ id: configured.body.id });
    expect((await stack.gw.call('GET', '/globalsink/nats/errors', { admin: admin() })).body).toEqual([]);
    const listed = await stack.gw.call('GET', '/globalsink', { admin: admin() });
    expect(listed.body.filter((sink: { kind: string }) => sink.kind === 'nats')).toEqual([expect.objectContaining({ id: configured.body.id, source: 'api' })]);
    expect((await stack.gw.call('GET', '/globalwebhook', { admin: admin() })).status).toBe(404);
    expect(await stack.gw.call('GET', '/globalwebhook/all', { admin: admin() })).toMatchObject({ status: 200, body: [] });
    expect((await stack.gw.call('DELETE', '/globalsink/kafka', { admin: admin() })).status).toBe(404);
  });

  it('refuses to change or delete a global sink env names (409): the relay would write it back at its next start', async () => {
    const repository = new WebhookRepository(stack.db.dataSource);
    const values = {
      kind: 'kafka' as const,
      url: 'kafka://ops:envpass@127.0.0.1:9',
      options: { topic: 'from-env' },
      enabled: true,
      events: ['messages'],
      excludeMessages: [],
      addUrlEvents: false,
      addUrlTypesMessages: false,
      includeToken: false,
    };
    // A global sink made through the API before env named one: it can still be deleted, env's cannot.
    const earlier = await stack.gw.call('POST', '/globalsink/kafka', { admin: admin(), body: { url: 'kafka://127.0.0.1:11', events: ['messages'] } });
    expect(earlier.status).toBe(200);
    await repository.syncEnvSink('env-kafka', values, 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0');
    try {
      expect(await stack.gw.call('DELETE', '/globalsink/kafka', { admin: admin() })).toEqual({ status: 200, body: { response: 'Global Kafka sink deleted' } });
      expect((await stack.gw.call('GET', '/globalsink/kafka', { admin: admin() })).body).toMatchObject({
        id: 'env-kafka',
        source: 'env',
        url: 'kafka://ops:***@127.0.0.1:9',
      });
      const changed = await stack.gw.call('POST', '/globalsink/kafka', { admin: admin(), body: { url: 'kafka://127.0.0.1:10', events: ['presence'] } });
      expect(changed.status).toBe(409);
      expect(changed.body.error).toMatch(/configured by env \(KAFKA_BROKERS\)/);
      const deleted = await stack.gw.call('DELETE', '/globalsink/kafka', { admin: admin() });
      expect(deleted.status).toBe(409);
      expect(await repository.listFor(null, 'kafka')).toEqual([
        expect.objectContaining({ id: 'env-kafka', url: 'kafka://ops:envpass@127.0.0.1:9', events: ['messages'], options: { topic: 'from-env' } }),
      ]);
    } finally {
      await repository.syncEnvSink('env-kafka', null, '');
    }
  });

  it('delivers a received message to RabbitMQ and NATS JetStream, each with its stable id', async () => {
    const friend = nextPhone('5597');
    await stack.control('POST', '/sim/accounts', { phone: friend, name: 'Rita' });
    await stack.control('POST', `/sim/accounts/${friend}/send`, { to: owner, text: 'pedido 42' });

    const isOurs = (message: ConsumeMessage) => JSON.parse(message.content.toString()).message?.text === 'pedido 42';
    await waitFor(
      async () => consumed.filter(isOurs),
      (found) => found.length > 0,
      20_000,
      'the message on RabbitMQ',
    );
    const onRabbit = consumed.find(isOurs) as ConsumeMessage;
    const envelope = JSON.parse(onRabbit.content.toString());
    expect(envelope).toMatchObject({
      BaseUrl: 'https://gw.example',
      EventType: 'messages',
      instanceName: 'sinks',
      message: { text: 'pedido 42', fromMe: false },
    });
    expect(onRabbit.properties.messageId).toMatch(/^evt_\d+$/);
    expect(onRabbit.fields.routingKey).toMatch(/^wa\.r[0-9a-f]+\.messages$/);
    // Only messages were asked for: no other event reached the exchange.
    expect(consumed.every((message) => message.properties.type === 'messages')).toBe(true);

    const stored = await waitFor(
      async () => {
        const info = (await nats.request(`$JS.API.STREAM.INFO.${stream}`, '', { timeout: 2_000 })).json<{ state?: { messages: number; last_seq: number } }>();
        return info.state?.messages ?? 0;
      },
      (count) => count > 0,
      20_000,
      'the message on JetStream',
    );
    expect(stored).toBeGreaterThan(0);
    const { message } = (await nats.request(`$JS.API.STREAM.MSG.GET.${stream}`, JSON.stringify({ last_by_subj: `e2e.${suffix}.>` }), { timeout: 2_000 })).json<{
      message: { subject: string; hdrs: string; data: string };
    }>();
    expect(message.subject).toMatch(new RegExp(`^e2e\\.${suffix}\\.r[0-9a-f]+\\.messages$`));
    expect(Buffer.from(message.hdrs, 'base64').toString()).toContain(`Nats-Msg-Id: ${onRabbit.properties.messageId}`);
    expect(JSON.parse(Buffer.from(message.data, 'base64').toString())).toMatchObject({ EventType: 'messages', message: { text: 'pedido 42' } });

    expect((await stack.gw.call('DELETE', '/globalsink/nats', { admin: admin() })).body).toEqual({ response: 'Global NATS sink deleted' });
    expect((await stack.gw.call('GET', '/globalsink/nats', { admin: admin() })).status).toBe(404);

    // Deleting or disabling a sink closes its broker connection at once (the relay follows the API's notice).
    const connections = (kind: 'nats' | 'rabbitmq') =>
      (
        (relay as unknown as { targets: { transports: Map<string, { openConnections: number }> } }).targets.transports.get(kind) as {
          openConnections: number;
        }
      ).openConnections;
    await waitFor(
      async () => connections('nats'),
      (open) => open === 0,
      1_000,
      'the deleted NATS sink closing its connection',
    );
    expect(connections('rabbitmq')).toBe(1);
    expect((await stack.gw.call('POST', '/sink/rabbitmq', { token, body: { enabled: false } })).body).toEqual([expect.objectContaining({ enabled: false })]);
    await waitFor(
      async () => connections('rabbitmq'),
      (open) => open === 0,
      1_000,
      'the disabled RabbitMQ sink closing its connection',
    );
  });
});
