import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Bus, InProcessBus, NatsBus } from '@gw/bus';
import { DeliveryRepository, InstanceRepository, OutboxRepository, WebhookRepository } from '@gw/persistence';
import { createLogger, SsrfGuard } from '@gw/platform';
import { openTestDatabase, testNatsUrl, type TestDatabase } from '@gw/testing';
import { generateWebhookSecret, WEBHOOK_RELAY_DEFAULTS, WebhookRelay, type WebhookRelayConfig } from '@gw/relay';

const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

/**
 * Issue #39's rolling restart, for webhook relays: a relay stopped (SIGTERM: the Nest module's shutdown
 * calls stop()) with a run of deliveries claimed finishes the request in flight and gives the rest back at
 * once, so another relay delivers them right away instead of after the claim lapses (30 s here). Over
 * Postgres, and NATS when the machine has it (the relays' notices), as deployed.
 */
describe('a webhook relay stopped with deliveries claimed', () => {
  const CLAIM_MS = 30_000;
  let db: TestDatabase;
  let bus: Bus;
  let server: Server;
  let url = '';
  /** webhook-id of every delivery the receiver accepted, in order. */
  const received: string[] = [];
  let hold: Promise<void> | undefined;
  let holding: (() => void) | undefined;
  let heldOne: Promise<void>;
  let sawHeld: () => void;
  const relays: WebhookRelay[] = [];

  const config = (): WebhookRelayConfig => ({
    ...WEBHOOK_RELAY_DEFAULTS,
    publicBaseUrl: 'http://gateway.test',
    includeToken: false,
    retryScheduleMs: [50, 50, 50],
    pollIntervalMs: 50,
    claimMs: CLAIM_MS,
    laneRunLength: 20,
    ssrf: SsrfGuard.fromList('127.0.0.0/8'),
  });
  const relay = () => {
    const sut = new WebhookRelay(
      new DeliveryRepository(db.dataSource),
      new WebhookRepository(db.dataSource),
      new InstanceRepository(db.dataSource),
      bus,
      config(),
      createLogger('relay-stop-test', 'silent'),
    );
    relays.push(sut);
    return sut;
  };

  beforeEach(async () => {
    db = await openTestDatabase();
    const nats = await testNatsUrl();
    bus = nats ? await NatsBus.connect(nats, 'relay-stop-test') : new InProcessBus();
    received.length = 0;
    heldOne = new Promise((resolve) => (sawHeld = resolve));
    // The first delivery is held open until the test lets it go (a slow receiver); the rest answer at once.
    hold = new Promise((resolve) => (holding = resolve));
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const id = String(request.headers['webhook-id']);
        const answer = () => {
          received.push(id);
          response.writeHead(200).end('ok');
        };
        if (hold && received.length === 0) {
          sawHeld();
          void hold.then(answer);
        } else answer();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterEach(async () => {
    holding?.();
    await Promise.all(relays.splice(0).map((sut) => sut.stop()));
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await bus.close();
    await db.close();
  });

  /** Ten events of one chat (one lane: a relay claims them as one run) for a webhook on the receiver. */
  const tenEvents = async () => {
    const instanceId = `r${Math.random().toString(16).slice(2, 14)}`;
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: `tok-${instanceId}`, name: 'relay-stop' });
    await new WebhookRepository(db.dataSource).insert(
      `w${Math.random().toString(16).slice(2, 10)}`,
      instanceId,
      { url, enabled: true, events: [], excludeMessages: [], addUrlEvents: false, addUrlTypesMessages: false, includeToken: false },
      generateWebhookSecret(),
    );
    await db.dataSource.transaction((manager) =>
      new OutboxRepository(db.dataSource).within(manager).insert(
        instanceId,
        Array.from({ length: 10 }, (_, n) => ({ eventType: 'messages', chatId: 'chat-1', payload: { EventType: 'messages', n } })),
      ),
    );
  };
  const claimed = async () => Number((await db.dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE claimed_until > now()`))[0].n);

  /** Relay A claims the run and is mid-request on its head when it is stopped; relay B starts after it. */
  const stopMidRun = async () => {
    await tenEvents();
    const a = relay();
    a.start();
    await heldOne;
    expect(await claimed()).toBe(10);
    const stopped = a.stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    holding!(); // the request in flight finishes during the stop
    await stopped;
    relay().start();
  };

  it('should finish the request in flight and give the rest back at once: the other relay delivers them all, once each, in order', async () => {
    await stopMidRun();
    // Far sooner than the claim's 30 s: the 9 left were released by the stop.
    await waitFor(() => received.length === 10, 5_000);
    expect(new Set(received).size).toBe(10);
    // webhook-id is evt_<outbox id>: the events' order.
    const order: Array<{ id: string }> = await db.dataSource.query(`SELECT id FROM outbox_events ORDER BY id`);
    expect(received).toEqual(order.map((row) => `evt_${row.id}`));
  }, 30_000);

  it('(control) would leave the other relay waiting for the claim to lapse had the stop not given the claims back', async () => {
    const release = jest.spyOn(DeliveryRepository.prototype, 'release').mockResolvedValue(undefined as never);
    try {
      await stopMidRun();
    } finally {
      release.mockRestore();
    }
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(received.length).toBe(1);
  }, 30_000);
});
