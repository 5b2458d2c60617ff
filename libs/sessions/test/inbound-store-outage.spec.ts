import { InProcessBus } from '@gw/bus';
import {
  FencedOutError,
  InstanceRepository,
  LeaseRepository,
  MessageRepository,
  openDatabase,
  type Database,
  type Lease,
  type NewOutboxEvent,
  type Tx,
} from '@gw/persistence';
import { newMessageFixture, openTestDatabase, startLatencyProxy, type LatencyProxy, type TestDatabase } from '@gw/testing';
import pino from 'pino';
import { InboundStore, InboundWriteFailedError } from '../src/messaging/inbound-store';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Issue #39 and #34, at the store: a write that meets no database is kept and tried again while the
 * lease is ours (its instance told it is stalled, so its socket is not read), and a received message
 * whose fenced write was refused because the lease moved is still stored, once, and evented once
 * (ADR 0034).
 */
describe('InboundStore: a database outage and a lease that moves', () => {
  let db: TestDatabase;
  let proxy: LatencyProxy;
  /** The worker's database, through the proxy: the outage is the proxy's, the shared Postgres stays up. */
  let proxied: Database;
  const bus = new InProcessBus();
  const logger = pino({ level: 'silent' });
  let leases: LeaseRepository;

  beforeAll(async () => {
    db = await openTestDatabase();
    const url = new URL(db.url);
    proxy = await startLatencyProxy({ host: url.hostname, port: Number(url.port || 5432) }, 0);
    proxied = await openDatabase({ url: proxy.rewrite(db.url), schema: db.schema, poolSize: 3 });
    leases = new LeaseRepository(db.dataSource);
  });
  afterAll(async () => {
    await proxied?.destroy().catch(() => undefined);
    await proxy?.close();
    await bus.close();
    await db.close();
  });

  const instance = async (id: string): Promise<void> => {
    await new InstanceRepository(db.dataSource).create({ id, token: `tok-${id}`, name: id });
  };

  /** A received message's write: inserts its row once by (instance, message id), and events it only when it inserted it. */
  const receive =
    (instanceId: string, messageId: string) =>
    async (tx: Tx, events: NewOutboxEvent[]): Promise<boolean> => {
      const rows = await new MessageRepository(db.dataSource).within(tx).insertNew([newMessageFixture(instanceId, { messageId, fromMe: false })]);
      if (rows.length === 0) return false;
      events.push({ eventType: 'messages', chatId: 'c', payload: { messageId } });
      return true;
    };

  const events = async (instanceId: string): Promise<string[]> =>
    (
      (await db.dataSource.query(`SELECT payload->>'messageId' AS id FROM outbox_events WHERE instance_id = $1 AND event_type = 'messages' ORDER BY id`, [
        instanceId,
      ])) as Array<{ id: string }>
    ).map((row) => row.id);

  for (const mode of ['refuse', 'blackhole'] as const) {
    it(`keeps a write through an outage (${mode}) while the lease is held, tells its instance it is stalled, and stores it once the database is back`, async () => {
      const id = `outage-${mode}`;
      await instance(id);
      const lease = (await leases.claim(id, 'worker-a', 60_000))!;
      const sut = new InboundStore(proxied, bus, logger, { maxBatch: 64, maxInFlight: 2, held: () => true });
      const stalls: boolean[] = [];
      sut.watch(id, (stalled) => stalls.push(stalled));

      proxy.outage(mode);
      const results = ['m1', 'm2', 'm3'].map((messageId) => sut.write(lease, receive(id, messageId), [messageId]));
      let settled = 0;
      for (const result of results) void result.then(() => settled++).catch(() => settled++);
      // Well past the three tries (0.6 s) of old, and past the connect timeout of a black-holed connect (5 s).
      await sleep(mode === 'blackhole' ? 7_000 : 2_500);
      expect(settled).toBe(0);
      expect(stalls).toEqual([true]);
      expect(sut.isStalled(id)).toBe(true);

      proxy.restore();
      expect(await Promise.all(results)).toEqual([true, true, true]);
      expect(stalls).toEqual([true, false]);
      expect(await events(id)).toEqual(['m1', 'm2', 'm3']);
    }, 60_000);
  }

  it('gives a write up once the lease is no longer held (the keeper stopped the session at its deadline)', async () => {
    const id = 'outage-lease-gone';
    await instance(id);
    const lease = (await leases.claim(id, 'worker-a', 60_000))!;
    let held = true;
    const sut = new InboundStore(proxied, bus, logger, { maxBatch: 64, maxInFlight: 2, held: () => held });
    proxy.outage('refuse');
    try {
      const result = sut.write(lease, receive(id, 'gone-1'));
      let settled = false;
      void result.catch(() => (settled = true));
      await sleep(1_500);
      expect(settled).toBe(false);
      held = false;
      await expect(result).rejects.toBeInstanceOf(InboundWriteFailedError);
    } finally {
      proxy.restore();
    }
    expect(await events(id)).toEqual([]);
  }, 30_000);

  describe('a received message whose fenced write is refused because the lease moved (issue #34, ADR 0034)', () => {
    const moveLease = async (id: string): Promise<{ stale: Lease; fresh: Lease }> => {
      await instance(id);
      const stale = (await leases.claim(id, 'worker-a', 60_000))!;
      await db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = $1`, [id]);
      const fresh = (await leases.claim(id, 'worker-b', 60_000))!;
      return { stale, fresh };
    };

    it('is stored without the fence, once, and evented once, whether the new holder stores it before or after', async () => {
      const id = 'moved-idempotent';
      const { stale, fresh } = await moveLease(id);
      const old = new InboundStore(db.dataSource, bus, logger);
      const heir = new InboundStore(db.dataSource, bus, logger);
      // The new holder got one of them too (e.g. WhatsApp sent it again before our receipt).
      expect(await heir.write(fresh, receive(id, 'both'), ['both'])).toBe(true);
      const results = await Promise.all([
        old.write(stale, receive(id, 'only-old'), ['only-old'], { idempotent: true }),
        old.write(stale, receive(id, 'both'), ['both'], { idempotent: true }),
      ]);
      // Stored by the old holder: the one only it had; the other was the heir's already (not evented again).
      expect(results).toEqual([true, false]);
      expect(old.unfencedWrites).toBe(2);
      // And the heir storing it afterwards changes nothing either.
      expect(await heir.write(fresh, receive(id, 'only-old'), ['only-old'])).toBe(false);
      expect((await events(id)).sort()).toEqual(['both', 'only-old']);
    });

    it('is stored the same way when it went in a group with writes of other instances', async () => {
      const id = 'moved-in-group';
      const { stale } = await moveLease(id);
      const other = 'moved-in-group-other';
      await instance(other);
      const held = (await leases.claim(other, 'worker-a', 60_000))!;
      const sut = new InboundStore(db.dataSource, bus, logger, { maxBatch: 64, maxInFlight: 1 });
      const results = await Promise.all([
        sut.write(held, receive(other, 'first'), ['first']), // alone: the next ones wait and go together
        sut.write(stale, receive(id, 'g1'), ['g1'], { idempotent: true }),
        sut.write(held, receive(other, 'second'), ['second']),
      ]);
      expect(results).toEqual([true, true, true]);
      expect(await events(id)).toEqual(['g1']);
      expect(await events(other)).toEqual(['first', 'second']);
    });

    it('still fails, writing nothing, when the write is not idempotent', async () => {
      const id = 'moved-not-idempotent';
      const { stale } = await moveLease(id);
      const sut = new InboundStore(db.dataSource, bus, logger);
      await expect(sut.write(stale, receive(id, 'status'))).rejects.toBeInstanceOf(FencedOutError);
      expect(await events(id)).toEqual([]);
      expect(sut.unfencedWrites).toBe(0);
    });
  });
});
