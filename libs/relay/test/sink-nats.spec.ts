import { connect, type NatsConnection } from '@nats-io/transport-node';
import { InProcessBus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import { DeliveryRepository, InstanceRepository, WebhookRepository, type WebhookRow } from '@gw/persistence';
import { SsrfGuard } from '@gw/platform';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { natsPublication, NatsTransport } from '@gw/relay';
import { addSink, emitEvents, failedAttemptSeen, sinkRelay, sinkRelayConfig } from './support/sink-fixtures';
import { TcpProxy, waitFor } from './support/tcp-proxy';

interface StoredMessage {
  subject: string;
  seq: number;
  headers: string;
  body: Record<string, unknown>;
}

/** The NATS JetStream sink against the machine's NATS (JetStream on), through a loopback proxy the test can cut. */
describe('NATS JetStream event sink', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let nats: NatsConnection;
  const bus = new InProcessBus();
  const suffix = Math.random().toString(16).slice(2, 10);
  const stream = `TEST_SINK_${suffix}`;
  const subjectPrefix = `test-sink.${suffix}`;
  const instances = [`na${suffix}`, `nb${suffix}`];

  const emit = (instanceId: string, from: number, count: number) =>
    emitEvents(db, instanceId, from, count, (n) => ({ eventType: n % 2 ? 'messages' : 'presence', payload: { EventType: 'x' } }));
  const api = async <T>(subject: string, body: unknown = ''): Promise<T> =>
    (await nats.request(subject, typeof body === 'string' ? body : JSON.stringify(body), { timeout: 2_000 })).json<T>();
  const storedMessages = async (): Promise<StoredMessage[]> => {
    const info = await api<{ state: { first_seq: number; last_seq: number } }>(`$JS.API.STREAM.INFO.${stream}`);
    const messages: StoredMessage[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.last_seq > 0; seq++) {
      const { message } = await api<{ message: { subject: string; seq: number; hdrs: string; data: string } }>(`$JS.API.STREAM.MSG.GET.${stream}`, { seq });
      messages.push({
        subject: message.subject,
        seq: message.seq,
        headers: Buffer.from(message.hdrs ?? '', 'base64').toString(),
        body: JSON.parse(Buffer.from(message.data, 'base64').toString()),
      });
    }
    return messages;
  };

  beforeAll(async () => {
    db = await openTestDatabase();
    for (const id of instances) await new InstanceRepository(db.dataSource).create({ id, token: `tok-${id}`, name: id });
    proxy = await new TcpProxy('127.0.0.1', 4222).start();
    nats = await connect({ servers: '127.0.0.1:4222' });
  });
  afterAll(async () => {
    await api(`$JS.API.STREAM.DELETE.${stream}`).catch(() => undefined);
    await nats?.close();
    await proxy?.stop();
    await db?.close();
  });

  it('maps an event to <prefix>.<instance>.<event> with its stable id as Nats-Msg-Id', () => {
    const publication = natsPublication(
      { subjectPrefix: 'p.q', stream: 'S' },
      { id: 'evt_7', event: { id: '7', instanceId: 'i1', eventType: 'messages', chatId: '', payload: {} }, body: '{}' },
    );
    expect(publication).toEqual({
      subject: 'p.q.i1.messages',
      headers: { 'Nats-Msg-Id': 'evt_7', 'Content-Type': 'application/json', 'Wa-Instance': 'i1', 'Wa-Event': 'messages' },
    });
  });

  it('stores every event once (JetStream dedupe), in order per instance, through a server outage', async () => {
    await addSink(db, 'nats', `s${suffix}`, null, `nats://${proxy.url}`, { subjectPrefix, stream });
    const sut = sinkRelay(db, sinkRelayConfig({ requestTimeoutMs: 1_500 }), bus);
    sut.start();
    await emit(instances[0], 0, 10);
    await emit(instances[1], 0, 10);
    const delivered = async () =>
      (
        (await db.dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'delivered'`, [
          `s${suffix}`,
        ])) as Array<{
          n: number;
        }>
      )[0].n;
    await waitFor(async () => (await delivered()) >= 5, 15_000, 'first deliveries');

    await proxy.cut();
    await emit(instances[0], 10, 10);
    await emit(instances[1], 10, 10);
    await waitFor(() => failedAttemptSeen(db, { global: true }, 'nats'), 15_000, 'a failed attempt during the outage');
    await proxy.restore();
    await emit(instances[0], 20, 10);
    await emit(instances[1], 20, 10);
    await waitFor(async () => (await delivered()) === 60, 30_000, 'every event delivered');
    await sut.stop();

    const stored = await storedMessages();
    const ids: Array<{ id: string }> = await db.dataSource.query(`SELECT id::text FROM outbox_events WHERE instance_id = ANY($1) ORDER BY id`, [instances]);
    const storedIds = stored.map((message) => /Nats-Msg-Id: (\S+)/.exec(message.headers)?.[1]);
    expect(storedIds).toHaveLength(60);
    expect(new Set(storedIds)).toEqual(new Set(ids.map((row) => `evt_${row.id}`)));
    for (const instanceId of instances) {
      const mine = stored.filter((message) => message.subject.startsWith(`${subjectPrefix}.${instanceId}.`));
      expect(mine.map((message) => message.body.n)).toEqual(Array.from({ length: 30 }, (_, n) => n));
      expect(mine.map((message) => message.subject.split('.').pop())).toEqual(Array.from({ length: 30 }, (_, n) => (n % 2 ? 'messages' : 'presence')));
    }
    expect(stored[0].body).toMatchObject({ BaseUrl: 'http://gateway.test' });
    const errors = await new DeliveryRepository(db.dataSource).recentErrors({ global: true }, 20, 'nats');
    expect(errors.length).toBeGreaterThan(0);
  });

  it('dials the addresses the SSRF guard passed, not the name (a later DNS answer cannot redirect a reconnection)', async () => {
    const sut = new NatsTransport({ ssrf: SsrfGuard.fromList('127.0.0.0/8,::1/128'), requestTimeoutMs: 2_000 });
    const url = `nats://localhost:${proxy.port}`;
    try {
      const target = { kind: 'nats', url, options: { subjectPrefix, stream } } as unknown as WebhookRow;
      const message = {
        id: 'evt_pinned',
        event: { id: '1', instanceId: instances[0], eventType: 'presence', chatId: '', payload: {} },
        body: '{}',
      };
      expect(await sut.send(target, message)).toEqual({ ok: true, statusCode: 0 });
      const connection = await (sut as unknown as { connections: { get(key: string): Promise<{ getServer(): string }> } }).connections.get(url);
      expect(connection.getServer()).toMatch(new RegExp(`^(127\\.0\\.0\\.1|\\[::1\\]):${proxy.port}$`));
    } finally {
      await sut.close();
    }
    // A name that resolves to an address the guard refuses is not dialled at all.
    const refused = await new NatsTransport({ ssrf: new SsrfGuard(), requestTimeoutMs: 1_000 }).send(
      { kind: 'nats', url, options: { subjectPrefix, stream } } as unknown as WebhookRow,
      { id: 'evt_refused', event: { id: '2', instanceId: instances[0], eventType: 'presence', chatId: '', payload: {} }, body: '{}' },
    );
    expect(refused).toMatchObject({ ok: false, error: expect.stringMatching(/connecting: refused by the SSRF guard: broker localhost/) });
  });

  it('answers 503 naming the stream when the stream is gone, and makes it again at the next attempt', async () => {
    // The sink's connection asks for no stack per request (noAsyncTraces): a failure still carries its cause.
    const own = `TEST_SINK_GONE_${suffix}`;
    const sut = new NatsTransport({ ssrf: SsrfGuard.fromList('127.0.0.0/8,::1/128'), requestTimeoutMs: 2_000 });
    const target = { kind: 'nats', url: 'nats://127.0.0.1:4222', options: { subjectPrefix: `${subjectPrefix}-gone`, stream: own } } as unknown as WebhookRow;
    const message = (n: number) => ({
      id: `evt_gone_${n}`,
      event: { id: String(n), instanceId: instances[0], eventType: 'presence', chatId: '', payload: {} },
      body: '{}',
    });
    try {
      expect(await sut.send(target, message(1))).toEqual({ ok: true, statusCode: 0 });
      await api(`$JS.API.STREAM.DELETE.${own}`);
      expect(await sut.send(target, message(2))).toEqual({
        ok: false,
        statusCode: 503,
        error: `no JetStream stream takes ${subjectPrefix}-gone.> (stream ${own})`,
      });
      expect(await sut.send(target, message(3))).toEqual({ ok: true, statusCode: 0 });
      expect((await api<{ state: { messages: number } }>(`$JS.API.STREAM.INFO.${own}`)).state.messages).toBe(1);
    } finally {
      await sut.close();
      await api(`$JS.API.STREAM.DELETE.${own}`).catch(() => undefined);
    }
  });

  it('closes its connection at once when the sink is deleted or disabled, and dials the broker no more', async () => {
    const broker = await new TcpProxy('127.0.0.1', 4222).start();
    const sut = sinkRelay(db, sinkRelayConfig(), bus);
    const webhooks = new WebhookRepository(db.dataSource);
    const delivered = async (id: string) =>
      (
        (await db.dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'delivered'`, [id])) as Array<{
          n: number;
        }>
      )[0].n;
    /** A sink of the instance to this broker that has delivered, so its connection is open. */
    const connectedSink = async (id: string, from: number) => {
      const sink = await addSink(db, 'nats', id, instances[1], `nats://${broker.url}`, { subjectPrefix, stream });
      await emit(instances[1], from, 2);
      await waitFor(async () => (await delivered(id)) === 2, 15_000, `${id} delivering`);
      expect(broker.openSockets).toBeGreaterThan(0);
      return sink;
    };
    /** The connection closes within a second, and no new one is dialled even when the broker comes and goes. */
    const closedForGood = async (what: string) => {
      await waitFor(() => broker.openSockets === 0, 1_000, `the connection closed after the sink was ${what}`);
      const dialled = broker.accepted;
      await broker.cut();
      await broker.restore();
      await emit(instances[1], 100, 2);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect({ dialled: broker.accepted, open: broker.openSockets }).toEqual({ dialled, open: 0 });
    };
    try {
      sut.start();
      await connectedSink(`d${suffix}`, 0);
      expect(await webhooks.delete(instances[1], `d${suffix}`, 'nats')).toBe(true);
      bus.publish(Subjects.sinksChanged, {});
      await closedForGood('deleted');

      const sink = await connectedSink(`o${suffix}`, 10);
      await webhooks.update(instances[1], sink.id, { ...sink, enabled: false });
      bus.publish(Subjects.sinksChanged, {});
      await closedForGood('disabled');
    } finally {
      await sut.stop();
      await broker.stop();
    }
  });
});
