import { NatsBus } from '@gw/bus';
import { LeaseRepository, openDatabase } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { SessionWorker, sessionWorkerConfig } from '@gw/sessions';
import { openTestDatabase, simulatorControl, startLatencyProxy, testNatsUrl, type LatencyProxy, type TestDatabase } from '@gw/testing';
import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import type { DataSource } from 'typeorm';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { nextPhone, sleep, waitFor, type InboxEntry } from './support/stack';

/**
 * Shorter than the outage (issue #39, ADR 0037): the leases lapse while the database cannot be reached, and
 * the worker rides the outage out instead of stopping its sessions; nobody took a lease meanwhile, so every
 * one is renewed with its token once the database answers.
 */
const LEASE_TTL_MS = 6_000;
const OUTAGE_MS = 15_000;

/**
 * Issue #39: the session worker rides out a Postgres outage longer than its lease. Over real NATS,
 * Postgres and Baileys against the simulator, the worker's database connections go through a loopback
 * proxy (the gateway's do not); the proxy cuts every connection and black-holes new ones for 15 s.
 * Meanwhile phones send messages to the instance and sync sends are made through the gateway. Once the
 * proxy is restored: every received message is stored once with its `messages` event once, the session
 * kept its linked device (no new pairing), a new contact's first message (a pre-key message) and an old
 * contact's next one decrypt, and every send answered 200 reached the phone once.
 */
jest.retryTimes(0);

describe('the session worker through a Postgres outage (issue 39)', () => {
  const logger = createLogger('pg-outage-e2e', process.env.TEST_LOG_LEVEL ?? 'silent');
  let sim: RunningSimulator;
  let db: TestDatabase;
  let proxy: LatencyProxy;
  let workerDb: DataSource;
  let gw: GatewayHarness;
  let worker: SessionWorker;
  const buses: NatsBus[] = [];

  const control = <T>(method: 'GET' | 'POST', path: string, body?: unknown) => simulatorControl<T>(sim, method, path, body);

  beforeAll(async () => {
    const natsUrl = await testNatsUrl();
    if (!natsUrl) throw new Error('this suite needs NATS (NATS_URL or a nats-server on 127.0.0.1:4222)');
    sim = await startSimulator({ logLevel: 'silent', initialPrekeyCount: 1000 });
    db = await openTestDatabase();
    const url = new URL(db.url);
    proxy = await startLatencyProxy({ host: url.hostname, port: Number(url.port || 5432) }, 0);
    workerDb = await openDatabase({ url: proxy.rewrite(db.url), schema: db.schema, poolSize: 10 });
    const gatewayBus = await NatsBus.connect(natsUrl, 'pg-outage-gateway');
    const workerBus = await NatsBus.connect(natsUrl, 'pg-outage-worker');
    buses.push(gatewayBus, workerBus);
    gw = await startGateway({ bus: gatewayBus, db, env: { CONNECT_TIMEOUT_MS: '30000' } });
    worker = new SessionWorker({
      dataSource: workerDb,
      bus: workerBus,
      logger,
      config: sessionWorkerConfig({
        workerId: 'pg-outage-worker',
        leaseTtlMs: LEASE_TTL_MS,
        reconcileIntervalMs: 500,
        reconnectBaseMs: 200,
        reconnectMaxMs: 2_000,
        queryTimeoutMs: 5_000,
        simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
      }),
    });
    await worker.start();
  }, 180_000);

  afterAll(async () => {
    proxy?.restore();
    await worker?.stop().catch(() => undefined);
    await gw?.close();
    for (const bus of buses) await bus.close().catch(() => undefined);
    await workerDb?.destroy().catch(() => undefined);
    await proxy?.close();
    await sim?.stop();
    await db?.close();
  });

  /** What the database holds of these received messages: rows and `messages` events per id. */
  const storedOf = async (instanceId: string, ids: string[]) => {
    const rows: Array<{ message_id: string; n: string; texts: string[] }> = await db.dataSource.query(
      `SELECT message_id, count(*) AS n, array_agg(coalesce(text, '')) AS texts FROM messages WHERE instance_id = $1 AND message_id = ANY($2) GROUP BY message_id`,
      [instanceId, ids],
    );
    const events: Array<{ message_id: string; n: string }> = await db.dataSource.query(
      `SELECT payload->'message'->>'messageid' AS message_id, count(*) AS n FROM outbox_events
       WHERE instance_id = $1 AND event_type = 'messages' AND payload->'message'->>'messageid' = ANY($2) GROUP BY 1`,
      [instanceId, ids],
    );
    return {
      rows: new Map(rows.map((row) => [row.message_id, { count: Number(row.n), texts: row.texts }])),
      events: new Map(events.map((row) => [row.message_id, Number(row.n)])),
    };
  };

  it('rides out a 15 s outage with a 6 s lease: stores every message received once, evented once, keeps lease, token and linked device, loses no accepted send', async () => {
    // The instance, linked by QR.
    const phone = nextPhone('5590');
    await control('POST', '/sim/accounts', { phone });
    const { id, token } = await gw.createInstance('pg-outage');
    const connect = await gw.call('POST', '/instance/connect', { token, body: {} });
    if (connect.status !== 200) throw new Error(`connect: ${connect.status} ${JSON.stringify(connect.body)}`);
    const qr: string =
      connect.body.instance.qrcode ||
      (
        await waitFor(
          () => gw.call('GET', '/instance/status', { token }),
          (r) => Boolean(r.body.instance?.qrcode),
          30_000,
          'the QR code',
        )
      ).body.instance.qrcode;
    const device = await control<{ jid: string }>('POST', '/sim/scan', { phone, qr });
    await waitFor(
      () => gw.call('GET', '/instance/status', { token }),
      (r) => r.body.status?.connected === true,
      30_000,
      'connected',
    );
    const lease = await new LeaseRepository(db.dataSource).holderOf(id);
    expect(lease?.workerId).toBe('pg-outage-worker');

    // Contacts that have written before (their Signal sessions exist), and the peer our sends go to.
    const contacts = Array.from({ length: 4 }, () => nextPhone('5591'));
    for (const [n, contact] of contacts.entries()) await control('POST', '/sim/accounts', { phone: contact, name: `O${n}` });
    const peer = nextPhone('5592');
    await control('POST', '/sim/accounts', { phone: peer });
    const received: Array<{ id: string; text: string; during: boolean }> = [];
    const send = async (from: string, text: string, during: boolean) => {
      const { id: messageId } = await control<{ id: string }>('POST', `/sim/accounts/${from}/send`, { to: phone, text });
      received.push({ id: messageId, text, during });
    };
    for (const contact of contacts) await send(contact, `hello from ${contact}`, false);
    await waitFor(
      () =>
        storedOf(
          id,
          received.map((message) => message.id),
        ),
      (stored) => stored.events.size === received.length,
      20_000,
      'the first messages stored',
    );

    // Sync sends through the gateway, one after the other, all along.
    const sends: Array<{ text: string; startedAt: number; endedAt: number; status: number; body: unknown }> = [];
    let flowing = true;
    const sending = (async () => {
      for (let seq = 0; flowing; seq++) {
        const text = `outage send ${seq}`;
        const startedAt = Date.now();
        const answer = await gw.call('POST', '/send/text', { token, body: { number: peer, text } });
        sends.push({ text, startedAt, endedAt: Date.now(), status: answer.status, body: answer.body });
        await sleep(200);
      }
    })();
    await sleep(1_000);

    // The outage: every connection of the worker cut, new ones black-holed, for 15 s; the phones go on writing.
    const outageAt = Date.now();
    proxy.outage('blackhole');
    for (let round = 0; Date.now() - outageAt < OUTAGE_MS - 1_000; round++) {
      await Promise.all(contacts.map((contact) => send(contact, `during ${round} from ${contact}`, true)));
      await sleep(1_000);
    }
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - outageAt)));
    const duringOutage = {
      stored: (
        await storedOf(
          id,
          received.map((message) => message.id),
        )
      ).rows.size,
      held: worker.keeper.heldCount,
      ridingOut: worker.keeper.ridingOutOutage,
      leaseLapsed: (await new LeaseRepository(db.dataSource).holderOf(id)) === null,
    };
    proxy.restore();
    const restoredAt = Date.now();

    // Everything received lands once the database is back.
    const all = received.map((message) => message.id);
    await waitFor(
      () => storedOf(id, all),
      (stored) => stored.events.size === all.length,
      60_000,
      'every received message announced',
    );
    const storedAllMs = Date.now() - restoredAt;
    await sleep(3_000);
    flowing = false;
    await sending;

    // After the outage: an old contact's next message and a new contact's first one (a pre-key message) decrypt.
    const newcomer = nextPhone('5593');
    await control('POST', '/sim/accounts', { phone: newcomer, name: 'Newcomer' });
    await send(newcomer, 'first words after the outage', false);
    await send(contacts[0], 'and again after the outage', false);
    const after = received.slice(-2).map((message) => message.id);
    await waitFor(
      () => storedOf(id, after),
      (stored) => stored.events.size === 2,
      30_000,
      'the messages after the outage',
    );

    const stored = await storedOf(
      id,
      received.map((message) => message.id),
    );
    const storedOnce = received.filter((message) => stored.rows.get(message.id)?.count === 1 && stored.events.get(message.id) === 1);
    const duplicated = received.filter((message) => (stored.events.get(message.id) ?? 0) > 1);
    const lost = received.filter((message) => !stored.rows.has(message.id));
    const undecrypted = received.filter((message) => stored.rows.has(message.id) && !stored.rows.get(message.id)!.texts.includes(message.text));

    // Sends: each answered 200 reaches the phone once.
    const accepted = sends.filter((one) => one.status === 200);
    const inbox = await waitFor(
      () => control<InboxEntry[]>('GET', `/sim/accounts/${peer}/inbox`),
      (entries) => accepted.every((one) => entries.some((entry) => JSON.stringify(entry.message).includes(`"${one.text}"`))),
      30_000,
      'every accepted send delivered',
    ).catch(() => control<InboxEntry[]>('GET', `/sim/accounts/${peer}/inbox`));
    const deliveries = (text: string) => inbox.filter((entry) => JSON.stringify(entry.message).includes(`"${text}"`)).length;
    const sendsLost = accepted.filter((one) => deliveries(one.text) === 0);
    const sendsDuplicated = accepted.filter((one) => deliveries(one.text) > 1);
    const refused = sends.filter((one) => one.status !== 200);

    process.stdout.write(
      `postgres outage (${OUTAGE_MS} ms, black-holed): received ${received.length} (${received.filter((m) => m.during).length} during the outage), ` +
        `stored once ${storedOnce.length}, duplicated ${duplicated.length}, lost ${lost.length}, undecrypted ${undecrypted.length}; ` +
        `stored during the outage ${duringOutage.stored}, leases held at its end ${duringOutage.held} (riding out: ${duringOutage.ridingOut}); all stored ${storedAllMs} ms after the restore; ` +
        `sends ${sends.length}: accepted ${accepted.length}, refused ${refused.length} (${[...new Set(refused.map((one) => one.status))].join(', ') || '-'}), ` +
        `lost ${sendsLost.length}, duplicated ${sendsDuplicated.length}\n`,
    );

    expect({ lost: lost.map((m) => m.text), duplicated: duplicated.map((m) => m.text), undecrypted: undecrypted.map((m) => m.text) }).toEqual({
      lost: [],
      duplicated: [],
      undecrypted: [],
    });
    expect(storedOnce).toHaveLength(received.length);
    // The lease lapsed during the outage, the session rode it out and kept it (same token), and its linked device.
    expect(duringOutage).toEqual(expect.objectContaining({ held: 1, ridingOut: true, leaseLapsed: true }));
    expect((await new LeaseRepository(db.dataSource).holderOf(id))?.fencingToken).toBe(lease?.fencingToken);
    const status = await gw.call('GET', '/instance/status', { token });
    expect(status.body.status.connected).toBe(true);
    expect(status.body.instance.qrcode).toBeFalsy();
    const devices = await control<Array<{ jid: string; status: string }>>('GET', `/sim/devices?phone=${phone}`);
    expect(devices.filter((entry) => entry.status === 'active').map((entry) => entry.jid)).toEqual([device.jid]);
    expect({ sendsLost: sendsLost.map((one) => one.text), sendsDuplicated: sendsDuplicated.map((one) => one.text) }).toEqual({
      sendsLost: [],
      sendsDuplicated: [],
    });
    expect(accepted.length).toBeGreaterThan(0);
  }, 240_000);
});
