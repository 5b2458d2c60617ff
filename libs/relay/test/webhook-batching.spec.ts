import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { InProcessBus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import { DeliveryRepository, InstanceRepository, openDatabase, OutboxRepository, WebhookRepository } from '@gw/persistence';
import { createLogger, SsrfGuard } from '@gw/platform';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { generateWebhookSecret, matchWebhooks, WEBHOOK_RELAY_DEFAULTS, WebhookRelay, type WebhookRelayConfig } from '@gw/relay';
import type { DataSource } from 'typeorm';

/** The relay's repositories on a DataSource, as WebhookRelayModule injects them from PersistenceModule. */
const repositoriesOf = (dataSource: DataSource) =>
  [new DeliveryRepository(dataSource), new WebhookRepository(dataSource), new InstanceRepository(dataSource)] as const;

interface Delivered {
  lane: string;
  n: number;
}

/**
 * A loopback receiver that records, per lane, what arrived and how many requests of a lane were in
 * flight at once. `decide` answers each request: a status, or 'hold' to never answer it.
 */
async function startReceiver() {
  const delivered: Delivered[] = [];
  const inFlight = new Map<string, number>();
  let maxInFlightPerLane = 0;
  const held: ServerResponse[] = [];
  const sockets = new Set<Socket>();
  let requests = 0;
  let decide: (body: Delivered, index: number) => number | 'hold' = () => 200;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let raw = '';
    request.on('data', (chunk) => (raw += chunk));
    request.on('end', () => {
      const body = JSON.parse(raw) as Delivered;
      const answer = decide(body, requests++);
      if (answer === 'hold') {
        held.push(response);
        return;
      }
      const now = (inFlight.get(body.lane) ?? 0) + 1;
      inFlight.set(body.lane, now);
      maxInFlightPerLane = Math.max(maxInFlightPerLane, now);
      // Answer a little later, so that a second request of the same lane would overlap this one.
      setTimeout(() => {
        inFlight.set(body.lane, (inFlight.get(body.lane) ?? 1) - 1);
        if (answer >= 200 && answer < 300) delivered.push({ lane: body.lane, n: body.n });
        response.writeHead(answer).end('ok');
      }, 2);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    delivered,
    held,
    maxInFlightPerLane: () => maxInFlightPerLane,
    decide: (fn: typeof decide) => (decide = fn),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

/** Per lane, the numbers in the order they first arrived. */
function firstArrivals(delivered: Delivered[]): Map<string, number[]> {
  const lanes = new Map<string, number[]>();
  const seen = new Set<string>();
  for (const { lane, n } of delivered) {
    if (seen.has(`${lane}|${n}`)) continue;
    seen.add(`${lane}|${n}`);
    lanes.set(lane, [...(lanes.get(lane) ?? []), n]);
  }
  return lanes;
}

const ascending = (count: number) => Array.from({ length: count }, (_, n) => n);

describe('webhook delivery in batches', () => {
  let db: TestDatabase;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let instanceId = '';
  let webhookId = '';
  const bus = new InProcessBus();
  const logger = createLogger('relay-batching-test', 'silent');
  const config = (overrides: Partial<WebhookRelayConfig> = {}): WebhookRelayConfig => ({
    ...WEBHOOK_RELAY_DEFAULTS,
    publicBaseUrl: 'http://gateway.test',
    includeToken: false,
    retryScheduleMs: Array.from({ length: 20 }, () => 30),
    pollIntervalMs: 50,
    batchSize: 40,
    laneRunLength: 4,
    maxInFlightPerReceiver: 4,
    ssrf: SsrfGuard.fromList('127.0.0.0/8'),
    ...overrides,
  });

  /** `perLane` events in each of `lanes` chats, interleaved; each payload names its lane and number. */
  const emit = async (lanes: number, perLane: number) => {
    const events: Array<{ eventType: string; chatId: string; payload: Record<string, unknown> }> = [];
    for (let n = 0; n < perLane; n++) {
      for (let lane = 0; lane < lanes; lane++)
        events.push({ eventType: 'messages', chatId: `chat-${lane}`, payload: { EventType: 'messages', lane: `chat-${lane}`, n } });
    }
    await db.dataSource.transaction((manager) => new OutboxRepository(db.dataSource).within(manager).insert(instanceId, events));
  };
  const statuses = async () => new DeliveryRepository(db.dataSource).countByStatus();

  beforeEach(async () => {
    db = await openTestDatabase();
    receiver = await startReceiver();
    instanceId = `b${Math.random().toString(16).slice(2, 16)}`;
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: `tok-${instanceId}`, name: 'batching' });
    webhookId = `w${Math.random().toString(16).slice(2, 10)}`;
    await new WebhookRepository(db.dataSource).insert(
      webhookId,
      instanceId,
      { url: receiver.url, enabled: true, events: [], excludeMessages: [], addUrlEvents: false, addUrlTypesMessages: false, includeToken: false },
      generateWebhookSecret(),
    );
  });
  afterEach(async () => {
    await receiver.close();
    await db.close();
  });

  describe('the claim', () => {
    it('should take each lane head with the run behind it in order, and leave claimed lanes to nobody else', async () => {
      await emit(3, 5);
      const sut = new DeliveryRepository(db.dataSource);
      await sut.fanOut(100, matchWebhooks);
      const first = await sut.claimDue(100, 30_000, { perLane: 3 });
      expect(first).toHaveLength(9);
      const byLane = new Map<string, number[]>();
      for (const claim of first) byLane.set(claim.headId, [...(byLane.get(claim.headId) ?? []), Number(claim.event.payload.n)]);
      expect([...byLane.values()]).toEqual([ascending(3), ascending(3), ascending(3)]);
      expect(first.every((claim) => claim.attempt === 1)).toBe(true);
      // Every lane's head is claimed: a second relay finds nothing, though rows are pending behind them.
      expect(await sut.claimDue(100, 30_000, { perLane: 3 })).toEqual([]);

      // Recording the first two of a lane leaves its third (still ours) at the head: still nothing.
      const lane = first.filter((claim) => claim.headId === first[0].headId);
      await sut.markDelivered(lane.slice(0, 2).map((claim) => ({ deliveryId: claim.deliveryId, statusCode: 200 })));
      expect(await sut.claimDue(100, 30_000, { perLane: 3 })).toEqual([]);
      // Released, the lane is claimable again from that third delivery on.
      await sut.release([lane[2].deliveryId]);
      const again = await sut.claimDue(100, 30_000, { perLane: 3 });
      expect(again.map((claim) => [claim.position, claim.event.payload.n])).toEqual([
        [1, 2],
        [2, 3],
        [3, 4],
      ]);
    });

    it('should let a retrying head hold its lane back', async () => {
      await emit(1, 3);
      const sut = new DeliveryRepository(db.dataSource);
      await sut.fanOut(100, matchWebhooks);
      const [head, ...rest] = await sut.claimDue(100, 30_000, { perLane: 3 });
      await sut.release(rest.map((claim) => claim.deliveryId));
      await sut.markAttemptFailed(head.deliveryId, webhookId, 503, 'receiver answered 503', new Date(Date.now() + 60_000));
      expect(await sut.claimDue(100, 30_000, { perLane: 3 })).toEqual([]);
    });

    it('should order a lane by outbox id even when a later event was fanned out first', async () => {
      await emit(1, 2);
      const sut = new DeliveryRepository(db.dataSource);
      // Another relay holds the first event while the second is fanned out: its delivery id is lower.
      await db.dataSource.query(`UPDATE outbox_events SET dispatched_at = now() WHERE id = (SELECT min(id) FROM outbox_events)`);
      await sut.fanOut(100, matchWebhooks);
      await db.dataSource.query(`UPDATE outbox_events SET dispatched_at = NULL WHERE id = (SELECT min(id) FROM outbox_events)`);
      await sut.fanOut(100, matchWebhooks);
      const claims = await sut.claimDue(100, 30_000, { perLane: 2 });
      expect(claims.map((claim) => claim.event.payload.n)).toEqual([0, 1]);
      expect(Number(claims[0].deliveryId)).toBeGreaterThan(Number(claims[1].deliveryId));
    });

    it('should claim and record deliveries by primary key, not by scanning every pending delivery', async () => {
      // A backlog: 4,000 pending deliveries in 40 lanes, and the statistics a running database would have.
      await emit(40, 100);
      const sut = new DeliveryRepository(db.dataSource);
      await sut.fanOut(5_000, matchWebhooks);
      await db.dataSource.query('ANALYZE webhook_deliveries');
      const query = jest.spyOn(db.dataSource, 'query');
      const claims = await sut.claimDue(500, 30_000, { perLane: 20 });
      await sut.markDelivered(claims.map((claim) => ({ deliveryId: claim.deliveryId, statusCode: 200, latencyMs: 3 })));
      const [claim, mark] = query.mock.calls as Array<[string, unknown[]]>;
      query.mockRestore();
      expect(claims).toHaveLength(500);
      // Each statement's plan, as run (EXPLAIN without ANALYZE runs nothing).
      const scans = async ([text, values]: [string, unknown[]]) => {
        const [{ 'QUERY PLAN': plan }] = await db.dataSource.query(`EXPLAIN (FORMAT JSON) ${text}`, values);
        const found: string[] = [];
        const walk = (node: { 'Node Type': string; 'Relation Name'?: string; Plans?: unknown[] }) => {
          if (node['Relation Name'] === 'webhook_deliveries') found.push(node['Node Type']);
          for (const child of node.Plans ?? []) walk(child as typeof node);
        };
        walk((plan as Array<{ Plan: Parameters<typeof walk>[0] }>)[0].Plan);
        return found;
      };
      expect(await scans(claim)).not.toContain('Seq Scan');
      expect(await scans(mark)).not.toContain('Seq Scan');
    });
  });

  it('should keep every lane in order with one request at a time under two relays and failing attempts', async () => {
    const lanes = 8;
    const perLane = 15;
    // Every fourth request fails: its lane must wait for the retry, the other lanes go on.
    receiver.decide((_body, index) => (index % 4 === 3 ? 503 : 200));
    await emit(lanes, perLane);
    const relays = [
      new WebhookRelay(...repositoriesOf(db.dataSource), bus, config(), logger),
      new WebhookRelay(...repositoriesOf(db.dataSource), bus, config(), logger),
    ];
    for (const relay of relays) relay.start();
    try {
      await waitFor(async () => (await statuses()).delivered === lanes * perLane);
    } finally {
      await Promise.all(relays.map((relay) => relay.stop()));
    }
    const arrivals = firstArrivals(receiver.delivered);
    expect(arrivals.size).toBe(lanes);
    for (const numbers of arrivals.values()) expect(numbers).toEqual(ascending(perLane));
    expect(receiver.maxInFlightPerLane()).toBe(1);
    expect(receiver.delivered).toHaveLength(lanes * perLane);
  });

  it('should keep delivering to a receiver while another one does not answer at all', async () => {
    // A second instance whose webhook points at a receiver that holds every request.
    const stuck = await startReceiver();
    stuck.decide(() => 'hold');
    const stuckInstance = `s${Math.random().toString(16).slice(2, 16)}`;
    await new InstanceRepository(db.dataSource).create({ id: stuckInstance, token: `tok-${stuckInstance}`, name: 'stuck' });
    const stuckWebhook = await new WebhookRepository(db.dataSource).insert(
      `w${Math.random().toString(16).slice(2, 10)}`,
      stuckInstance,
      { url: stuck.url, enabled: true, events: [], excludeMessages: [], addUrlEvents: false, addUrlTypesMessages: false, includeToken: false },
      generateWebhookSecret(),
    );
    // 60 lanes, older than the other receiver's events: claims take the oldest lane heads first.
    const stuckEvents = Array.from({ length: 60 }, (_, n) => ({
      eventType: 'messages',
      chatId: `chat-${n}`,
      payload: { EventType: 'messages', lane: `chat-${n}`, n: 0 },
    }));
    await db.dataSource.transaction((manager) => new OutboxRepository(db.dataSource).within(manager).insert(stuckInstance, stuckEvents));
    await emit(4, 10);
    const sut = new WebhookRelay(
      ...repositoriesOf(db.dataSource),
      bus,
      config({ requestTimeoutMs: 120_000, batchSize: 20, maxInFlightPerReceiver: 2 }),
      logger,
    );
    sut.start();
    try {
      // The stuck receiver fills its two slots and its share of claims; the other one gets everything.
      await waitFor(() => firstArrivals(receiver.delivered).size === 4 && receiver.delivered.length === 40);
      expect(stuck.held.length).toBeLessThanOrEqual(2);
      // Its share: once half a batch (10) waits for it, its lanes are left out of the claims.
      const [{ n }] = await db.dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND claimed_until > now()`, [
        stuckWebhook.id,
      ]);
      expect(n).toBeLessThanOrEqual(30);
    } finally {
      for (const response of stuck.held.splice(0)) response.socket?.destroy();
      await sut.stop();
      await stuck.close();
    }
    for (const numbers of firstArrivals(receiver.delivered).values()) expect(numbers).toEqual(ascending(10));
  });

  it('should not claim for new events whose only receiver already has half a batch claimed here', async () => {
    // The receiver holds every request: its claims stay unsent, so it stays busy (half a batch or more claimed).
    receiver.decide(() => 'hold');
    await emit(10, 2);
    const [deliveries, webhooks, instances] = repositoriesOf(db.dataSource);
    const claimDue = jest.spyOn(deliveries, 'claimDue');
    // No poll during the test: only notices and progress start passes.
    const sut = new WebhookRelay(deliveries, webhooks, instances, bus, config({ requestTimeoutMs: 120_000, pollIntervalMs: 60_000 }), logger);
    sut.start();
    try {
      await waitFor(() => receiver.held.length === 4);
      // A claim may still be in flight behind the one that made the receiver busy; let the loops settle.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const claimsBefore = claimDue.mock.calls.length;
      // New events for the busy receiver's lanes, announced: they are fanned out, and no claim walks the lanes for them.
      await emit(10, 2);
      bus.publish(Subjects.outbox(instanceId), { instanceId, lastId: '0' });
      await waitFor(async () => (await statuses()).pending === 40);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(claimDue.mock.calls.length).toBe(claimsBefore);
    } finally {
      for (const response of receiver.held.splice(0)) response.socket?.destroy();
      await sut.stop();
    }
  });

  it('should lose nothing when a relay dies in the middle of a batch', async () => {
    const lanes = 6;
    const perLane = 10;
    await emit(lanes, perLane);
    // The relay that dies: a few deliveries succeed, then its receiver stops answering; it dies with
    // requests in flight, runs claimed behind them and, perhaps, successes it never recorded.
    receiver.decide((_body, index) => (index < 8 ? 200 : 'hold'));
    const doomedDb: DataSource = await openDatabase({ url: db.url, schema: db.schema, poolSize: 3 });
    const doomed = new WebhookRelay(...repositoriesOf(doomedDb), bus, config({ claimMs: 1_500, requestTimeoutMs: 120_000 }), logger);
    doomed.start();
    await waitFor(() => receiver.held.length >= 4);
    // kill -9: from now on it can neither write to Postgres nor get an answer.
    await doomedDb.destroy();

    receiver.decide(() => 200);
    const survivor = new WebhookRelay(...repositoriesOf(db.dataSource), bus, config(), logger);
    survivor.start();
    try {
      await waitFor(async () => (await statuses()).delivered === lanes * perLane);
    } finally {
      await survivor.stop();
      for (const response of receiver.held.splice(0)) response.socket?.destroy();
      await doomed.stop();
    }
    const arrivals = firstArrivals(receiver.delivered);
    expect(arrivals.size).toBe(lanes);
    for (const numbers of arrivals.values()) expect(numbers).toEqual(ascending(perLane));
    expect(await statuses()).toEqual({ delivered: lanes * perLane });
  });

  it('should start claiming while a long fan-out is still going (a burst written in many transactions)', async () => {
    await emit(4, 10);
    const [deliveries, webhooks, instances] = repositoriesOf(db.dataSource);
    const calls: string[] = [];
    const fanOut = deliveries.fanOut.bind(deliveries);
    jest.spyOn(deliveries, 'fanOut').mockImplementation(async (...args) => {
      const fanned = await fanOut(...args);
      calls.push(`fan-out ${fanned.events}`);
      // A slow batch: the next ones are still to come.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return fanned;
    });
    const claimDue = deliveries.claimDue.bind(deliveries);
    jest.spyOn(deliveries, 'claimDue').mockImplementation(async (...args) => {
      const claims = await claimDue(...args);
      calls.push(`claim ${claims.length}`);
      return claims;
    });
    // Fan-out in batches of 5 (8 of them); no poll, so only fan-out and progress start claims.
    const sut = new WebhookRelay(deliveries, webhooks, instances, bus, config({ batchSize: 5, pollIntervalMs: 60_000 }), logger);
    sut.start();
    try {
      await waitFor(async () => (await statuses()).delivered === 40);
    } finally {
      await sut.stop();
    }
    const firstClaimWithRows = calls.findIndex((call) => /^claim [1-9]/.test(call));
    const lastFanOut = calls.map((call) => call.startsWith('fan-out')).lastIndexOf(true);
    expect(firstClaimWithRows).toBeGreaterThan(-1);
    expect(firstClaimWithRows).toBeLessThan(lastFanOut);
    for (const numbers of firstArrivals(receiver.delivered).values()) expect(numbers).toEqual(ascending(10));
  });
});
