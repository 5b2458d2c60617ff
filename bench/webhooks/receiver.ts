/** The receiver's process: the loopback webhook (or a RabbitMQ consumer, or a NATS subscriber) that records each event's latency, duplicates and order. */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type EventPayload, eventFor } from './events';
import { send } from './ipc';
import { amqpUrl, natsServers, natsSinkUrl, SINK } from './options';

export interface PhaseStats {
  count: number;
  duplicates: number;
  outOfOrder: number;
  firstAt: number;
  lastAt: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** p99 of the events created in the phase's first COLD_START_MS (a relay just started: cold pool, plans, caches). */
  coldStartP99Ms: number | null;
  /** p99 of the events created in each half second of the phase, in order: where a tail comes from. */
  p99MsByHalfSecond: Array<number | null>;
  /** Deliveries received in each 100 ms from the phase's first (the shape of a burst: ramp, plateau, tail). */
  deliveredPer100ms?: number[];
}

/** The start of a phase measured on its own (`coldStartP99Ms`): a relay restarted during a deploy. */
const COLD_START_MS = 2_000;

/** The q-quantile of ascending `sorted` (nearest rank), null when empty. */
function quantile(sorted: Float64Array, q: number): number | null {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : null;
}

/** Latency quantiles of a phase: all of it, its first COLD_START_MS, and each half second by creation time. */
function latencyStats(latencies: number[], created: number[]): Pick<PhaseStats, 'p50Ms' | 'p99Ms' | 'maxMs' | 'coldStartP99Ms' | 'p99MsByHalfSecond'> {
  const sorted = Float64Array.from(latencies).sort();
  const start = created.reduce((min, at) => Math.min(min, at), Infinity);
  const buckets: number[][] = [];
  const cold: number[] = [];
  latencies.forEach((latency, index) => {
    const offset = created[index] - start;
    if (offset < COLD_START_MS) cold.push(latency);
    (buckets[Math.floor(offset / 500)] ??= []).push(latency);
  });
  return {
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: quantile(sorted, 1),
    coldStartP99Ms: quantile(Float64Array.from(cold).sort(), 0.99),
    p99MsByHalfSecond: Array.from(buckets, (bucket) => (bucket ? quantile(Float64Array.from(bucket).sort(), 0.99) : null)),
  };
}

export async function runReceiver(): Promise<void> {
  const phases = new Map<
    string,
    {
      latencies: number[];
      created: number[];
      seen: Set<number>;
      laneLast: Map<string, number>;
      duplicates: number;
      outOfOrder: number;
      firstAt: number;
      lastAt: number;
      per100ms: number[];
    }
  >();
  const record = (content: Buffer) => {
    const now = Date.now();
    try {
      const body = JSON.parse(content.toString('utf8')) as EventPayload;
      let stats = phases.get(body.phase);
      if (!stats)
        phases.set(
          body.phase,
          (stats = { latencies: [], created: [], seen: new Set(), laneLast: new Map(), duplicates: 0, outOfOrder: 0, firstAt: now, lastAt: now, per100ms: [] }),
        );
      if (stats.seen.has(body.seq)) stats.duplicates++;
      else {
        const bucket = Math.floor((now - stats.firstAt) / 100);
        while (stats.per100ms.length <= bucket) stats.per100ms.push(0);
        stats.per100ms[bucket]++;
        stats.seen.add(body.seq);
        stats.latencies.push(now - body.createdAt);
        stats.created.push(body.createdAt);
      }
      const last = stats.laneLast.get(body.lane) ?? -1;
      if (body.seq < last) stats.outOfOrder++;
      else stats.laneLast.set(body.lane, body.seq);
      stats.lastAt = now;
    } catch {
      // not ours
    }
  };
  let close: () => Promise<void>;
  let warm: (count: number) => Promise<void> = async () => undefined;
  if (SINK === 'rabbitmq') {
    // A consumer of an exclusive queue bound to the bench's own (durable) exchange, deleted at the end.
    const { connect } = await import('amqplib');
    const connection = await connect(amqpUrl);
    const channel = await connection.createChannel();
    const exchange = `bench-webhooks-${randomBytes(4).toString('hex')}`;
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(queue, exchange, '#');
    await channel.consume(queue, (message) => message && record(message.content), { noAck: true });
    send({ url: amqpUrl, exchange });
    close = async () => {
      await channel.deleteExchange(exchange).catch(() => undefined);
      await connection.close().catch(() => undefined);
    };
  } else if (SINK === 'nats') {
    // The bench's own JetStream stream, made here so that both sides publish into the same one (the sink makes one
    // only when it is missing, with these settings), and a plain subscription to its subjects that sees every
    // message published to them (a repeated publish too, which the stream drops by its Nats-Msg-Id: counted as
    // a duplicate here). Both deleted at the end.
    const { connect } = await import('@nats-io/transport-node');
    const { natsStreamConfig } = await import('@gw/relay');
    const connection = await connect({ servers: natsServers(natsSinkUrl) });
    const tag = randomBytes(4).toString('hex');
    const exchange = `bench-webhooks-${tag}`;
    const stream = `BENCH_WEBHOOKS_${tag.toUpperCase()}`;
    await jetStreamApi(connection, `STREAM.CREATE.${stream}`, natsStreamConfig({ subjectPrefix: exchange, stream }));
    const subscription = connection.subscribe(`${exchange}.>`, {
      callback: (error, message) => {
        if (!error) record(Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength));
      },
    });
    send({ url: natsSinkUrl, exchange, stream });
    close = async () => {
      subscription.unsubscribe();
      await jetStreamApi(connection, `STREAM.DELETE.${stream}`, {}).catch(() => undefined);
      await connection.close().catch(() => undefined);
    };
  } else {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        record(Buffer.concat(chunks));
        response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
        response.end('ok');
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    send({ url });
    close = () => new Promise<void>((resolve) => server.close(() => resolve()));
    warm = (count) => warmReceiver(url, count);
  }
  process.on('message', (message: { id: number; cmd: string; phase: string; countOnly?: boolean; count?: number }) => {
    if (message.cmd === 'warm') {
      void warm(message.count ?? 0).then(() => send({ id: message.id }));
      return;
    }
    if (message.cmd !== 'stats') return;
    const stats = phases.get(message.phase);
    if (!stats) {
      send({
        id: message.id,
        stats: {
          count: 0,
          duplicates: 0,
          outOfOrder: 0,
          firstAt: 0,
          lastAt: 0,
          p50Ms: null,
          p99Ms: null,
          maxMs: null,
          coldStartP99Ms: null,
          p99MsByHalfSecond: [],
        } satisfies PhaseStats,
      });
      return;
    }
    send({
      id: message.id,
      stats: {
        count: stats.seen.size,
        duplicates: stats.duplicates,
        outOfOrder: stats.outOfOrder,
        firstAt: stats.firstAt,
        lastAt: stats.lastAt,
        ...(message.countOnly
          ? { p50Ms: null, p99Ms: null, maxMs: null, coldStartP99Ms: null, p99MsByHalfSecond: [] }
          : { ...latencyStats(stats.latencies, stats.created), deliveredPer100ms: stats.per100ms }),
      } satisfies PhaseStats,
    });
  });
  process.on('disconnect', () => void close().finally(() => process.exit(0)));
}

/** One JetStream API request (`$JS.API.<what>`); throws the API's error. */
async function jetStreamApi(connection: import('@nats-io/transport-node').NatsConnection, what: string, body: Record<string, unknown>): Promise<void> {
  const reply = (await connection.request(`$JS.API.${what}`, JSON.stringify(body), { timeout: 10_000 })).json<{ error?: { description?: string } }>();
  if (reply.error) throw new Error(`JetStream ${what}: ${reply.error.description ?? 'error'}`);
}

/**
 * The receiver's own code warmed before the relay's phase (`--receiver-warm`): `count` posts of the
 * phases' bodies to itself, 8 at a time, in phase `receiver-warm` (not reported). The relay's phases
 * run first, so a cold receiver (its JavaScript not yet optimised) would be charged to the relay alone:
 * the bare client's phases, later, found it warm.
 */
async function warmReceiver(url: string, count: number): Promise<void> {
  const { Agent, request } = await import('undici');
  const agent = new Agent({ connections: 8 });
  let next = 0;
  const post = async () => {
    while (next < count) {
      const seq = next++;
      const response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(eventFor('receiver-warm', seq, Date.now()).payload),
      });
      await response.body.dump();
    }
  };
  await Promise.all(Array.from({ length: 8 }, post));
  await agent.close();
}
