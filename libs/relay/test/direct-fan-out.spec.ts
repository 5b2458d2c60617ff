import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InProcessBus } from '@gw/bus';
import { type DirectFanOut, DeliveryRepository, InstanceRepository, OutboxRepository, WebhookRepository } from '@gw/persistence';
import { createLogger, EnvReader, SsrfGuard } from '@gw/platform';
import { openTestDatabase, sleep, type TestDatabase, waitFor } from '@gw/testing';
import { generateWebhookSecret, matchWebhooks, readWebhookRelayConfig, WEBHOOK_RELAY_DEFAULTS, WebhookRelay, type WebhookRelayConfig } from '@gw/relay';

/**
 * ADR 0046 (issue #38): fan-out claims the deliveries its relay can send at once, so they go out without a
 * claim statement. A lane is claimed at its insert only when it has no pending row after the last event of this
 * relay's run of it (nothing pending at all when it has none): a retrying head, a backlog or another relay's
 * rows leave the new rows pending behind them. Every delivery still goes out once and in lane order, with two
 * relays fanning out side by side, a receiver failing mid-run, and more than a receiver's share at once.
 */
describe('fan-out that claims what it can send at once', () => {
  let db: TestDatabase;
  let instanceId = '';
  let webhookId = '';

  const emit = async (events: Array<{ chat: string; n: number }>) => {
    await db.dataSource.transaction((manager) =>
      new OutboxRepository(db.dataSource).within(manager).insert(
        instanceId,
        events.map(({ chat, n }) => ({ eventType: 'messages', chatId: chat, payload: { EventType: 'messages', chat, n } })),
      ),
    );
  };
  const addWebhook = (url: string) =>
    new WebhookRepository(db.dataSource).insert(
      (webhookId = `w${Math.random().toString(16).slice(2, 10)}`),
      instanceId,
      { url, enabled: true, events: [], excludeMessages: [], addUrlEvents: false, addUrlTypesMessages: false, includeToken: false },
      generateWebhookSecret(),
    );
  const pending = async () =>
    (await db.dataSource.query(
      `SELECT d.chat_id, (o.payload->>'n')::int AS n, claimed_until IS NOT NULL AS claimed FROM webhook_deliveries d JOIN outbox_events o ON o.id = d.event_id
       WHERE d.status = 'pending' ORDER BY d.event_id`,
    )) as Array<{ chat_id: string; n: number; claimed: boolean }>;

  beforeEach(async () => {
    db = await openTestDatabase();
    instanceId = `d${Math.random().toString(16).slice(2, 16)}`;
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: `tok-${instanceId}`, name: 'direct' });
  });
  afterEach(() => db.close());

  describe('DeliveryRepository.fanOut with a plan', () => {
    let sut: DeliveryRepository;
    const plan = (after: (chat: string) => string | null): DirectFanOut => ({
      claimMs: 30_000,
      plan: (candidates) => candidates.map((candidate) => after(candidate.laneChatId)),
    });
    const run = (after: (chat: string) => string | null) => sut.fanOut(100, matchWebhooks, plan(after));

    beforeEach(async () => {
      sut = new DeliveryRepository(db.dataSource);
      await addWebhook('http://127.0.0.1:9/hook');
    });

    it('should claim every delivery of an empty lane at its insert, with its event as a claim returns it', async () => {
      await emit([
        { chat: 'a', n: 1 },
        { chat: 'a', n: 2 },
        { chat: 'a', n: 3 },
      ]);
      const fanned = await run(() => '0');
      expect(fanned.claims.map((claim) => [claim.attempt, claim.webhookId, JSON.parse(claim.event.payloadJson as string).n])).toEqual([
        [1, webhookId, 1],
        [1, webhookId, 2],
        [1, webhookId, 3],
      ]);
      expect(fanned.claims[0].event.payload).toEqual({ EventType: 'messages', chat: 'a', n: 1 });
      expect(fanned.leftPending).toEqual([]);
      expect(fanned.pendingWebhookIds.size).toBe(0);
      expect(await pending()).toEqual([1, 2, 3].map((n) => ({ chat_id: 'a', n, claimed: true })));
    });

    it('should leave pending what is not offered, and what a lane holds another pending row for', async () => {
      await emit([
        { chat: 'a', n: 1 },
        { chat: 'b', n: 1 },
      ]);
      // Neither offered: both wait for a claim.
      expect((await run(() => null)).claims).toEqual([]);
      await emit([
        { chat: 'a', n: 2 },
        { chat: 'c', n: 1 },
      ]);
      // Lane a holds an unclaimed row (its head, say retrying): its new row waits behind it; lane c is empty.
      const fanned = await run(() => '0');
      expect(fanned.claims.map((claim) => claim.event.chatId)).toEqual(['c']);
      expect(fanned.leftPending.map((candidate) => [candidate.laneChatId, candidate.webhookId])).toEqual([['a', webhookId]]);
      expect(fanned.pendingWebhookIds).toEqual(new Set([webhookId]));
      expect(await pending()).toEqual([
        { chat_id: 'a', n: 1, claimed: false },
        { chat_id: 'b', n: 1, claimed: false },
        { chat_id: 'a', n: 2, claimed: false },
        { chat_id: 'c', n: 1, claimed: true },
      ]);
    });

    it("should claim behind the relay's own run of a lane, and not behind anyone else's row after it", async () => {
      await emit([{ chat: 'a', n: 1 }]);
      const [first] = (await run(() => '0')).claims;
      // The lane holds only our row, up to its event: the next ones join our run.
      await emit([{ chat: 'a', n: 2 }]);
      const [second] = (await run(() => first.event.id)).claims;
      expect(JSON.parse(second.event.payloadJson as string).n).toBe(2);
      // Judged as if we held the lane only up to the first: the second row is someone else's, after it.
      await emit([{ chat: 'a', n: 3 }]);
      const third = await run(() => first.event.id);
      expect(third.claims).toEqual([]);
      expect(third.leftPending).toHaveLength(1);
      expect((await pending()).map((row) => [row.n, row.claimed])).toEqual([
        [1, true],
        [2, true],
        [3, false],
      ]);
    });

    it("should judge a lane after another relay's fan-out has committed, not beside it", async () => {
      await emit([{ chat: 'a', n: 1 }]);
      let reached!: () => void;
      const inPlan = new Promise<void>((resolve) => (reached = resolve));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      // The first fan-out stops in its plan, its events read and its transaction open.
      const first = sut.fanOut(100, matchWebhooks, {
        claimMs: 30_000,
        plan: async (candidates) => {
          reached();
          await gate;
          return candidates.map(() => '0');
        },
      });
      await inPlan;
      await emit([{ chat: 'a', n: 2 }]);
      const second = new DeliveryRepository(db.dataSource).fanOut(
        100,
        matchWebhooks,
        plan(() => '0'),
      );
      await sleep(300);
      release();
      const [one, two] = await Promise.all([first, second]);
      // The second waited for the first: it saw lane a's claimed row and left its own pending behind it.
      expect(one.claims.map((claim) => JSON.parse(claim.event.payloadJson as string).n)).toEqual([1]);
      expect(two.claims).toEqual([]);
      expect(two.leftPending).toHaveLength(1);
    });

    it('should let the other relays fan out again once a relay stuck inside its fan-out has been idle 5 s', async () => {
      await emit([{ chat: 'a', n: 1 }]);
      let reached!: () => void;
      const inPlan = new Promise<void>((resolve) => (reached = resolve));
      // A relay frozen in its plan, the fan-out lock held; its transaction is never finished from here.
      const stuck = sut
        .fanOut(100, matchWebhooks, {
          claimMs: 30_000,
          plan: async (candidates) => {
            reached();
            await sleep(6_000);
            return candidates.map(() => '0');
          },
        })
        .then(
          () => 'finished',
          () => 'failed',
        );
      await inPlan;
      await emit([{ chat: 'b', n: 1 }]);
      const started = Date.now();
      const other = await new DeliveryRepository(db.dataSource).fanOut(
        100,
        matchWebhooks,
        plan(() => '0'),
      );
      const waited = Date.now() - started;
      // Postgres ended the frozen one's session (idle in its transaction past 5 s); the lock went with it.
      expect(waited).toBeGreaterThan(4_000);
      expect(waited).toBeLessThan(7_500);
      // Its event was not dispatched (its transaction rolled back): the other fan-out took it too, first.
      expect(other.claims.map((claim) => claim.event.chatId)).toEqual(['a', 'b']);
      expect(await stuck).toBe('failed');
      expect((await run(() => '0')).events).toBe(0);
    }, 20_000);

    it('should fan out as before without a plan', async () => {
      await emit([{ chat: 'a', n: 1 }]);
      const fanned = await sut.fanOut(100, matchWebhooks);
      expect(fanned).toMatchObject({ events: 1, deliveries: 1, claims: [], leftPending: [] });
      expect(fanned.pendingWebhookIds).toEqual(new Set([webhookId]));
      expect(await pending()).toEqual([{ chat_id: 'a', n: 1, claimed: false }]);
    });
  });

  describe('relays', () => {
    let server: Server;
    let url = '';
    /** Per chat, the `n` of every delivery the receiver accepted, in arrival order. */
    let received: Map<string, number[]>;
    let answer: (body: { chat: string; n: number }) => number;
    const relays: WebhookRelay[] = [];
    const logger = createLogger('direct-fan-out-test', 'silent');
    const bus = new InProcessBus();
    const config = (overrides: Partial<WebhookRelayConfig> = {}): WebhookRelayConfig => ({
      ...WEBHOOK_RELAY_DEFAULTS,
      publicBaseUrl: 'http://gateway.test',
      includeToken: false,
      retryScheduleMs: [100, 100, 100],
      pollIntervalMs: 50,
      claimMs: 30_000,
      ssrf: SsrfGuard.fromList('127.0.0.0/8'),
      ...overrides,
    });
    const relay = (overrides: Partial<WebhookRelayConfig> = {}) => {
      const sut = new WebhookRelay(
        new DeliveryRepository(db.dataSource),
        new WebhookRepository(db.dataSource),
        new InstanceRepository(db.dataSource),
        bus,
        config(overrides),
        logger,
      );
      relays.push(sut);
      return sut;
    };
    const total = () => [...received.values()].reduce((sum, list) => sum + list.length, 0);
    /** Until the receiver has accepted `count` deliveries and none is pending. */
    const delivered = (count: number) =>
      waitFor(async () => total() >= count && (await pending()).length === 0, Boolean, 15_000, `${count} deliveries and none pending`);
    /** Every chat's deliveries arrived once each, in order. */
    const expectOnceInOrder = (chats: string[], perChat: number) => {
      for (const chat of chats) expect(received.get(chat)).toEqual(Array.from({ length: perChat }, (_, index) => index + 1));
    };
    const events = (chats: string[], from: number, to: number) => {
      const list: Array<{ chat: string; n: number }> = [];
      for (let n = from; n <= to; n++) for (const chat of chats) list.push({ chat, n });
      return list;
    };

    beforeEach(async () => {
      received = new Map();
      answer = () => 200;
      server = createServer((request, response) => {
        let body = '';
        request.on('data', (chunk) => (body += chunk));
        request.on('end', () => {
          const payload = JSON.parse(body) as { chat: string; n: number };
          const status = answer(payload);
          if (status === 200) {
            const list = received.get(payload.chat) ?? [];
            list.push(payload.n);
            received.set(payload.chat, list);
          }
          response.writeHead(status);
          response.end('ok');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      await addWebhook(url);
    });
    afterEach(async () => {
      await Promise.all(relays.splice(0).map((sut) => sut.stop()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('should deliver each event once and in order per lane with two relays fanning out side by side', async () => {
      const chats = ['a', 'b', 'c', 'd', 'e'];
      const first = relay();
      const second = relay();
      first.start();
      second.start();
      for (let n = 1; n <= 60; n += 10) {
        await emit(events(chats, n, n + 9));
        bus.publish(`events.${instanceId}`, { instanceId });
      }
      await delivered(300);
      expectOnceInOrder(chats, 60);
      expect(await db.dataSource.query(`SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`)).toEqual([{ status: 'delivered', n: 300 }]);
    });

    it("should wake one relay's fan-out per outbox notice, not every relay's", async () => {
      // No polls in the test's time: every fan-out here is a notice's.
      const first = relay({ pollIntervalMs: 60_000 });
      const second = relay({ pollIntervalMs: 60_000 });
      first.start();
      second.start();
      // Each relay's first pass runs at its start.
      await sleep(100);
      const fanOuts = jest.spyOn(DeliveryRepository.prototype, 'fanOut');
      try {
        for (let n = 1; n <= 6; n++) {
          await emit([{ chat: 'a', n }]);
          bus.publish(`events.${instanceId}`, { instanceId });
          await delivered(n);
        }
        expectOnceInOrder(['a'], 6);
        // A notice to each relay made two fan-outs of each event, one of them finding nothing (12 here).
        expect(fanOuts).toHaveBeenCalledTimes(6);
      } finally {
        fanOuts.mockRestore();
      }
    });

    it('should hold a lane behind its failing delivery, and send what came meanwhile after it, in order', async () => {
      let failures = 0;
      // The third event of lane a fails twice; events keep coming meanwhile.
      answer = ({ chat, n }) => (chat === 'a' && n === 3 && failures++ < 2 ? 503 : 200);
      const sut = relay();
      sut.start();
      for (let n = 1; n <= 30; n += 5) {
        await emit(events(['a', 'b'], n, n + 4));
        await sleep(30);
      }
      await delivered(60);
      expect(failures).toBe(3);
      expectOnceInOrder(['a', 'b'], 30);
    });

    it("should leave what is beyond a receiver's share pending for the claims, and deliver all of it in order", async () => {
      const chats = ['a', 'b', 'c'];
      const sut = relay({ batchSize: 8, laneRunLength: 3, maxInFlightPerReceiver: 2 });
      await emit(events(chats, 1, 40));
      sut.start();
      await delivered(120);
      expectOnceInOrder(chats, 40);
    });

    it('should deliver as before with WEBHOOK_DIRECT=false', async () => {
      expect(readWebhookRelayConfig(new EnvReader({ WEBHOOK_DIRECT: 'false' })).direct).toBe(false);
      expect(readWebhookRelayConfig(new EnvReader({})).direct).toBe(true);
      const sut = relay({ direct: false });
      await emit(events(['a'], 1, 5));
      sut.start();
      await delivered(5);
      expectOnceInOrder(['a'], 5);
    });
  });
});
