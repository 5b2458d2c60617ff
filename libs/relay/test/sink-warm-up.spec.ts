import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { connect as amqpConnect, type ChannelModel } from 'amqplib';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { InstanceRepository } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { addSink, emitEvents, sinkRelay, sinkRelayConfig } from './support/sink-fixtures';
import { TcpProxy, waitFor } from './support/tcp-proxy';

const AMQP = process.env.RABBITMQ_TEST_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/**
 * A relay starting in a deploy opens its broker sinks' connections before its first claim (warmUp), as their first
 * attempts would, so that those attempts do not pay for them: the machine's RabbitMQ and NATS through loopback
 * proxies that count the dials.
 */
describe('the broker sinks warmed up at a relay start', () => {
  let db: TestDatabase;
  let nats: NatsConnection;
  let amqp: ChannelModel;
  const suffix = Math.random().toString(16).slice(2, 10);
  const instanceId = `w${suffix}`;
  const stream = `TEST_WARM_${suffix}`;
  const subjectPrefix = `test-warm.${suffix}`;
  const exchange = `test-warm-${suffix}`;
  const proxies: TcpProxy[] = [];
  const proxy = async (port: number) => {
    const started = await new TcpProxy('127.0.0.1', port).start();
    proxies.push(started);
    return started;
  };
  const streamMessages = async (): Promise<number | null> => {
    const info = (await nats.request(`$JS.API.STREAM.INFO.${stream}`, '', { timeout: 2_000 })).json<{ state?: { messages: number }; error?: unknown }>();
    return info.error ? null : (info.state?.messages ?? null);
  };
  /** Whether the exchange exists (checkExchange closes its channel when it does not). */
  const exchangeExists = async (): Promise<boolean> => {
    const channel = await amqp.createChannel();
    channel.on('error', () => undefined);
    try {
      await channel.checkExchange(exchange);
      await channel.close();
      return true;
    } catch {
      return false;
    }
  };

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: `tok-${instanceId}`, name: instanceId });
    nats = await natsConnect({ servers: '127.0.0.1:4222' });
    amqp = await amqpConnect(AMQP);
    amqp.on('error', () => undefined);
  });
  afterAll(async () => {
    await nats?.request(`$JS.API.STREAM.DELETE.${stream}`, '', { timeout: 2_000 }).catch(() => undefined);
    const channel = await amqp?.createChannel().catch(() => undefined);
    await channel?.deleteExchange(exchange).catch(() => undefined);
    await amqp?.close().catch(() => undefined);
    await nats?.close();
    for (const started of proxies) await started.stop();
    await db?.close();
  });

  it('opens each enabled sink’s connection, declares its exchange and makes its stream, publishes nothing, and the first attempts use them', async () => {
    const natsBroker = await proxy(4222);
    const rabbitBroker = await proxy(5672);
    const disabledBroker = await proxy(4222);
    await addSink(db, 'nats', `n${suffix}`, instanceId, `nats://${natsBroker.url}`, { subjectPrefix, stream });
    // Two sinks of one broker and exchange: one connection, one declaration.
    for (const id of [`r${suffix}`, `q${suffix}`]) {
      await addSink(db, 'rabbitmq', id, instanceId, `amqp://guest:guest@${rabbitBroker.url}/`, {
        exchange,
        exchangeType: 'topic',
        routingKey: '{instance}.{event}',
      });
    }
    const disabled = await addSink(db, 'nats', `d${suffix}`, instanceId, `nats://${disabledBroker.url}`, {
      subjectPrefix: `${subjectPrefix}-off`,
      stream: `${stream}_OFF`,
    });
    await db.dataSource.query(`UPDATE webhooks SET enabled = false WHERE id = $1`, [disabled.id]);
    expect(await streamMessages()).toBeNull();
    expect(await exchangeExists()).toBe(false);

    const sut = sinkRelay(db, sinkRelayConfig());
    try {
      await sut.warmUp();
      expect({ nats: natsBroker.accepted, rabbitmq: rabbitBroker.accepted, disabled: disabledBroker.accepted }).toEqual({ nats: 1, rabbitmq: 1, disabled: 0 });
      // Each connection is two sockets in the proxy (the client's and the broker's), still open.
      expect({ nats: natsBroker.openSockets, rabbitmq: rabbitBroker.openSockets }).toEqual({ nats: 2, rabbitmq: 2 });
      expect(await streamMessages()).toBe(0);
      expect(await exchangeExists()).toBe(true);

      sut.start();
      await emitEvents(db, instanceId, 0, 4);
      await waitFor(async () => (await streamMessages()) === 4, 15_000, 'the events stored by the stream');
      const delivered = async () =>
        ((await db.dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`)) as Array<{ n: number }>)[0].n;
      await waitFor(async () => (await delivered()) === 12, 15_000, 'every event delivered to the three sinks');
      // The attempts went through the connections the warm-up opened.
      expect({ nats: natsBroker.accepted, rabbitmq: rabbitBroker.accepted }).toEqual({ nats: 1, rabbitmq: 1 });
    } finally {
      await sut.stop();
    }
  });

  it('does not hold the start longer than its deadline for a broker that never answers', async () => {
    // Accepts the connection and says nothing: neither client's handshake ever completes.
    const silent: Socket[] = [];
    const server: Server = createServer((socket) => silent.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const other = `m${suffix}`;
    await new InstanceRepository(db.dataSource).create({ id: other, token: `tok-${other}`, name: other });
    await db.dataSource.query(`UPDATE webhooks SET enabled = false`);
    await addSink(db, 'nats', `s${suffix}`, other, `nats://127.0.0.1:${port}`, { subjectPrefix: `${subjectPrefix}-silent`, stream: `${stream}_SILENT` });
    await addSink(db, 'rabbitmq', `t${suffix}`, other, `amqp://guest:guest@127.0.0.1:${port}/`, {
      exchange,
      exchangeType: 'topic',
      routingKey: '{instance}.{event}',
    });
    // The attempts' own timeout is far longer than the warm-up's deadline (2 s).
    const sut = sinkRelay(db, sinkRelayConfig({ requestTimeoutMs: 30_000 }));
    try {
      const started = performance.now();
      await sut.warmUp();
      // The HTTP client's warm-up (at most 2 s) and the sinks' deadline (2 s), far below the attempts' 30 s.
      expect(performance.now() - started).toBeLessThan(8_000);
      expect(silent.length).toBe(2);
    } finally {
      for (const socket of silent) socket.destroy();
      await sut.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 40_000);
});
