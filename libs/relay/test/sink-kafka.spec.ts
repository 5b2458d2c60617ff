import { createConnection } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { InstanceRepository, type WebhookRow } from '@gw/persistence';
import { SsrfGuard } from '@gw/platform';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { kafkaClientConfig, kafkaRecord, kafkaSinkOptions, KafkaTransport, parseBrokerUrl } from '@gw/relay';
import { addSink, emitEvents, sinkRelay, sinkRelayConfig } from './support/sink-fixtures';
import { waitFor } from './support/tcp-proxy';

const message = (instanceId: string, id: string) => ({
  id: `evt_${id}`,
  event: { id, instanceId, eventType: 'messages', chatId: 'c', payload: { EventType: 'messages' } },
  body: '{"EventType":"messages"}',
});

describe('Kafka event sink: mapping', () => {
  it('keys every record by instance (one partition per instance keeps its order) and carries the stable id', () => {
    expect(kafkaRecord({ topic: 'events' }, message('inst1', '42'))).toEqual({
      topic: 'events',
      message: {
        key: 'inst1',
        value: '{"EventType":"messages"}',
        headers: { 'message-id': 'evt_42', 'content-type': 'application/json', instance: 'inst1', event: 'messages' },
      },
    });
    expect(kafkaSinkOptions({})).toEqual({ topic: 'wa-gateway-events' });
  });

  it('turns the broker URL into the client settings: broker list, TLS, SASL from the user info', () => {
    const guard = new SsrfGuard();
    const plain = kafkaClientConfig(parseBrokerUrl('kafka', 'kafka://b1:9092,b2'), guard, 5_000);
    expect(plain).toMatchObject({ brokers: ['b1:9092', 'b2:9092'], ssl: false, connectionTimeout: 5_000 });
    expect(plain.sasl).toBeUndefined();
    const secure = kafkaClientConfig(parseBrokerUrl('kafka', 'kafkas://user:p%40ss@broker.example:9094?sasl=scram-sha-512'), guard, 5_000);
    expect(secure).toMatchObject({ brokers: ['broker.example:9094'], ssl: true, sasl: { mechanism: 'scram-sha-512', username: 'user', password: 'p@ss' } });
    expect(() => kafkaClientConfig(parseBrokerUrl('kafka', 'kafka://u:p@b1?sasl=gssapi'), guard, 5_000)).toThrow(/sasl must be/);
    expect(() => parseBrokerUrl('kafka', 'amqp://b1')).toThrow(/kafka:\/\//);
  });

  it('refuses a broker the SSRF guard refuses, recorded as a failed attempt', async () => {
    const sut = new KafkaTransport({ ssrf: new SsrfGuard(), requestTimeoutMs: 1_000 });
    const target = { kind: 'kafka', url: 'kafka://127.0.0.1:9092', options: {} } as unknown as WebhookRow;
    const outcome = await sut.send(target, message('i', '1'));
    await sut.close();
    expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(/private or reserved address \(127\.0\.0\.1\)/) });
  });
});

/** KAFKA_BROKERS (host:port,…) names a broker for this test; without a reachable one it is skipped, saying so. */
const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
const reachable = async (): Promise<boolean> => {
  if (brokers.length === 0) return false;
  const [host, port] = brokers[0].split(':');
  return new Promise((resolve) => {
    const socket = createConnection({ host, port: Number(port || 9092) }, () => (socket.end(), resolve(true)));
    socket.setTimeout(1_000, () => (socket.destroy(), resolve(false)));
    socket.on('error', () => resolve(false));
  });
};

// Without KAFKA_BROKERS the suite is skipped (and says so); set but unreachable, the test says so and does nothing.
const describeWithKafka = brokers.length > 0 ? describe : describe.skip;
if (brokers.length === 0) console.warn('Kafka sink integration test SKIPPED: KAFKA_BROKERS is not set (host:port,… of a reachable broker runs it)');

describeWithKafka('Kafka event sink: against a real broker', () => {
  let available = false;
  beforeAll(async () => {
    available = await reachable();
    if (!available) console.warn(`Kafka sink integration test SKIPPED: no broker reachable at KAFKA_BROKERS (${process.env.KAFKA_BROKERS})`);
  });

  it('delivers events keyed by instance, in order, with their stable ids (skipped without KAFKA_BROKERS)', async () => {
    if (!available) return;
    const db: TestDatabase = await openTestDatabase();
    const instanceId = `k${Math.random().toString(16).slice(2, 12)}`;
    const topic = `wa-gateway-test-${instanceId}`;
    try {
      await new InstanceRepository(db.dataSource).create({ id: instanceId, token: `tok-${instanceId}`, name: instanceId });
      await addSink(db, 'kafka', `s${instanceId}`, instanceId, `kafka://${brokers.join(',')}`, { topic });
      await emitEvents(db, instanceId, 0, 10);
      // Any broker address KAFKA_BROKERS names (and the ones it advertises) is allowed here.
      const sut = sinkRelay(db, sinkRelayConfig({ retryScheduleMs: [200, 200, 200], ssrf: new SsrfGuard(['0.0.0.0/0', '::/0']) }));
      sut.start();
      const kafka = new Kafka({ brokers, logLevel: logLevel.NOTHING });
      const consumer = kafka.consumer({ groupId: `g-${instanceId}` });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const got: Array<{ key: string; n: number; id: string }> = [];
      await consumer.run({
        eachMessage: async ({ message: record }) => {
          got.push({ key: String(record.key), n: JSON.parse(String(record.value)).n, id: String(record.headers?.['message-id']) });
        },
      });
      await waitFor(() => new Set(got.map((entry) => entry.id)).size >= 10, 30_000, 'every event on Kafka');
      await consumer.disconnect();
      await sut.stop();
      expect(got.every((entry) => entry.key === instanceId && /^evt_\d+$/.test(entry.id))).toBe(true);
      expect([...new Map(got.map((entry) => [entry.id, entry.n])).values()]).toEqual(Array.from({ length: 10 }, (_, n) => n));
    } finally {
      await db.close();
    }
  }, 60_000);
});
