import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { DeliveryLogRepository, DeliveryRepository, OutboxRepository, WebhookRepository, type WebhookRow } from '@gw/persistence';

/**
 * The delivery log and replay (issue #40) on real Postgres: what the relay records on each delivery's
 * row (latency, attempt times), the log's filters, scopes and keyset pages, and replay's upsert (a done
 * delivery made pending again with its marker, a pending one left alone, events the outbox no longer
 * holds counted, a too large replay writing nothing).
 */
describe(DeliveryLogRepository.name, () => {
  let db: TestDatabase;
  let sut: DeliveryLogRepository;
  let deliveries: DeliveryRepository;
  let hookA: WebhookRow;
  let sinkA: WebhookRow;
  let hookB: WebhookRow;
  const values = {
    url: 'http://127.0.0.1:9/h',
    enabled: true,
    events: [],
    excludeMessages: [],
    addUrlEvents: false,
    addUrlTypesMessages: false,
    includeToken: false,
  };

  const emit = async (instanceId: string, eventType: string, chatId = 'c1@s.whatsapp.net') =>
    db.dataSource.transaction(
      async (manager) =>
        (await new OutboxRepository(db.dataSource).within(manager).insert(instanceId, [{ eventType, chatId, payload: { eventType } }])) as string,
    );
  const fanOut = () => deliveries.fanOut(500, (event, webhooks) => webhooks.filter((hook) => hook.instanceId === null || hook.instanceId === event.instanceId));
  const rowOf = async (webhookId: string, eventId: string) =>
    (await db.dataSource.query(`SELECT * FROM webhook_deliveries WHERE webhook_id = $1 AND event_id = $2`, [webhookId, eventId]))[0];
  const wantsAll = () => true;

  let delivered = '';
  let retrying = '';
  let failed = '';
  let untouched = '';
  let eventOfB = '';

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new DeliveryLogRepository(db.dataSource);
    deliveries = new DeliveryRepository(db.dataSource);
    await db.dataSource.query(`INSERT INTO instances (id, token, name) VALUES ('rlogA', 'tok-log-a', 'a'), ('rlogB', 'tok-log-b', 'b')`);
    const webhooks = new WebhookRepository(db.dataSource);
    hookA = await webhooks.insert('hookA', 'rlogA', values, 'whsec_a');
    sinkA = await webhooks.insert('sinkA', 'rlogA', { ...values, kind: 'nats', url: 'nats://127.0.0.1:4222' }, 'whsec_s');
    hookB = await webhooks.insert('hookB', 'rlogB', values, 'whsec_b');
    delivered = await emit('rlogA', 'messages', 'c1');
    retrying = await emit('rlogA', 'messages', 'c2');
    failed = await emit('rlogA', 'connection', 'c3');
    untouched = await emit('rlogA', 'presence', 'c4');
    eventOfB = await emit('rlogB', 'messages');
    await fanOut();
    const id = async (webhookId: string, eventId: string) => String((await rowOf(webhookId, eventId)).id);
    await deliveries.markDelivered([{ deliveryId: await id('hookA', delivered), statusCode: 200, latencyMs: 12.4 }]);
    await deliveries.markAttemptFailed(await id('hookA', retrying), 'hookA', 503, 'receiver answered 503', new Date(Date.now() + 60_000), 40);
    await deliveries.markAttemptFailed(await id('hookA', failed), 'hookA', null, 'ECONNREFUSED', null, 3);
  });
  afterAll(() => db.close());

  describe('find', () => {
    it('should show each outcome with its attempts, status code, latency and attempt times', async () => {
      const rows = await sut.find({ targetsOf: { instanceId: 'rlogA', includeGlobal: false }, targetId: 'hookA', limit: 10 });
      const byEvent = new Map(rows.map((row) => [row.eventId, row]));
      expect(byEvent.get(delivered)).toMatchObject({ outcome: 'delivered', attempts: 1, lastStatusCode: 200, latencyMs: 12, nextAttemptAt: null });
      expect(byEvent.get(delivered)?.firstAttemptAt).toBeInstanceOf(Date);
      expect(byEvent.get(retrying)).toMatchObject({ outcome: 'retrying', attempts: 1, lastStatusCode: 503, latencyMs: 40, lastError: 'receiver answered 503' });
      expect(byEvent.get(retrying)?.nextAttemptAt?.getTime()).toBeGreaterThan(Date.now());
      expect(byEvent.get(failed)).toMatchObject({ outcome: 'failed', attempts: 1, lastStatusCode: null, lastError: 'ECONNREFUSED' });
      expect(byEvent.get(untouched)).toMatchObject({ outcome: 'pending', attempts: 0, firstAttemptAt: null, latencyMs: null, replayedAt: null });
    });

    it("should list only the scope's targets: an instance's own, never another's", async () => {
      const own = await sut.find({ targetsOf: { instanceId: 'rlogA', includeGlobal: false }, limit: 50 });
      expect(new Set(own.map((row) => row.targetId))).toEqual(new Set(['hookA', 'sinkA']));
      expect(own.some((row) => row.eventId === eventOfB)).toBe(false);
      const other = await sut.find({ targetsOf: { instanceId: 'rlogB', includeGlobal: false }, targetId: 'hookA', limit: 50 });
      expect(other).toEqual([]);
      const all = await sut.find({ limit: 50 });
      expect(all.some((row) => row.targetId === 'hookB')).toBe(true);
    });

    it('should filter by outcome, event type, event id, kind and time', async () => {
      const scope = { targetsOf: { instanceId: 'rlogA', includeGlobal: false }, limit: 50 };
      expect((await sut.find({ ...scope, outcome: 'retrying' })).map((row) => row.eventId)).toEqual([retrying]);
      expect((await sut.find({ ...scope, outcome: 'failed' })).map((row) => row.eventId)).toEqual([failed]);
      expect((await sut.find({ ...scope, kind: 'sink' })).every((row) => row.kind === 'nats')).toBe(true);
      expect((await sut.find({ ...scope, eventType: 'connection' })).map((row) => row.targetId).sort()).toEqual(['hookA', 'sinkA']);
      expect((await sut.find({ ...scope, eventId: untouched, targetId: 'sinkA' })).map((row) => row.eventId)).toEqual([untouched]);
      expect(await sut.find({ ...scope, from: new Date(Date.now() + 60_000) })).toEqual([]);
    });

    it('should page newest events first, each row once, across targets', async () => {
      const scope = { targetsOf: { instanceId: 'rlogA', includeGlobal: false } };
      const whole = await sut.find({ ...scope, limit: 50 });
      expect(whole).toHaveLength(8);
      const seen: string[] = [];
      let after: { eventId: string; targetId: string } | undefined;
      for (let page = 0; page < 10; page++) {
        const rows = await sut.find({ ...scope, limit: 3, after });
        seen.push(...rows.map((row) => row.id));
        if (rows.length < 3) break;
        after = { eventId: rows[2].eventId, targetId: rows[2].targetId };
      }
      expect(seen).toEqual(whole.map((row) => row.id));
      const order = whole.map((row) => BigInt(row.eventId));
      expect([...order].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0))).toEqual(order);
    });
  });

  describe('the plan', () => {
    it("should read a page by the (webhook_id, event_id) index, backwards from the page's start, however large the log", async () => {
      // Another target with a large log, the statistics up to date: a page of hookA's must not scan it.
      await db.dataSource.query(
        `INSERT INTO webhooks (id, instance_id, url, enabled, events, exclude_messages, secret) VALUES ('hookBig', 'rlogB', 'http://127.0.0.1:9/b', true, '{}', '{}', 'whsec_big')`,
      );
      await db.dataSource.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, instance_id, event_type, status, attempts, finished_at)
         SELECT 'hookBig', 1000000 + g, 'rlogB', 'messages', 'delivered', 1, now() FROM generate_series(1, 30000) g`,
      );
      await db.dataSource.query(`ANALYZE webhook_deliveries`);
      const runner = db.dataSource.createQueryRunner();
      const captured: string[] = [];
      const query = db.dataSource.query.bind(db.dataSource);
      // The statement find() sends, captured and explained as it is.
      (db.dataSource as unknown as { query: typeof query }).query = async (sql: string, parameters?: unknown[]) => {
        captured.push(JSON.stringify({ sql, parameters }));
        return query(sql, parameters);
      };
      try {
        await sut.find({
          targetsOf: { instanceId: 'rlogA', includeGlobal: false },
          outcome: 'delivered',
          limit: 50,
          after: { eventId: '999999999', targetId: 'zzz' },
        });
      } finally {
        (db.dataSource as unknown as { query: typeof query }).query = query;
      }
      const { sql, parameters } = JSON.parse(captured[0]) as { sql: string; parameters: unknown[] };
      try {
        const plan = (await runner.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, parameters)).map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
        expect(plan).toMatch(/Index Scan Backward using webhook_deliveries_webhook_id_event_id_key/);
        expect(plan).not.toMatch(/Seq Scan on webhook_deliveries/);
      } finally {
        await runner.release();
      }
    });
  });

  describe('replay', () => {
    it('should make done deliveries pending again with the marker, leave pending ones alone, and make missing ones', async () => {
      await db.dataSource.query(`DELETE FROM webhook_deliveries WHERE webhook_id = 'sinkA' AND event_id = $1`, [delivered]);
      const result = await sut.replay({
        targets: [hookA, sinkA],
        instanceId: 'rlogA',
        eventIds: [delivered, retrying, failed],
        origin: 'rlogA',
        maxEvents: 100,
        wants: wantsAll,
      });
      // hookA: delivered and failed again pending, retrying still pending; sinkA: `delivered` made anew, the other two pending.
      expect(result).toEqual({ queued: 3, pending: 3, unavailable: 0, tooMany: false });
      const again = await rowOf('hookA', delivered);
      expect(again).toMatchObject({ status: 'pending', attempts: 0, replay_origin: 'rlogA', last_status_code: null, first_attempt_at: null });
      expect(again.replayed_at).toBeInstanceOf(Date);
      expect(await rowOf('hookA', retrying)).toMatchObject({ attempts: 1, replayed_at: null });
      expect(await rowOf('sinkA', delivered)).toMatchObject({ status: 'pending', chat_id: '', replay_origin: 'rlogA' });
      const [shown] = await sut.find({ targetId: 'hookA', eventId: delivered, limit: 1 });
      expect(shown).toMatchObject({ outcome: 'pending', replayOrigin: 'rlogA' });
    });

    it("should count events the outbox no longer holds, and another instance's ids, as unavailable", async () => {
      await db.dataSource.query(`DELETE FROM outbox_events WHERE id = $1`, [untouched]);
      const result = await sut.replay({
        targets: [hookA],
        instanceId: 'rlogA',
        eventIds: [untouched, eventOfB],
        origin: 'rlogA',
        maxEvents: 100,
        wants: wantsAll,
      });
      expect(result).toEqual({ queued: 0, pending: 0, unavailable: 2, tooMany: false });
      // A window: the log's deliveries of hookA whose event is gone.
      const windowed = await sut.replay({
        targets: [hookA],
        instanceId: 'rlogA',
        from: new Date(Date.now() - 60_000),
        to: new Date(),
        eventTypes: ['presence'],
        origin: 'admin',
        maxEvents: 100,
        wants: wantsAll,
      });
      expect(windowed).toMatchObject({ queued: 0, unavailable: 1 });
    });

    it("should deliver only to targets that take the event, and never another instance's event to an instance's target", async () => {
      await db.dataSource.query(`UPDATE webhook_deliveries SET status = 'delivered' WHERE webhook_id = 'hookB'`);
      const result = await sut.replay({
        targets: [hookA, hookB],
        from: new Date(Date.now() - 60_000),
        to: new Date(),
        eventTypes: ['messages'],
        origin: 'admin',
        maxEvents: 100,
        wants: (target) => target.id === 'hookB',
      });
      expect(result).toMatchObject({ queued: 1, tooMany: false });
      expect(await rowOf('hookA', eventOfB)).toBeUndefined();
      expect(await rowOf('hookB', eventOfB)).toMatchObject({ status: 'pending', replay_origin: 'admin' });
    });

    it('should write nothing when more events match than it may replay', async () => {
      await db.dataSource.query(`UPDATE webhook_deliveries SET status = 'delivered' WHERE webhook_id = 'hookA'`);
      const result = await sut.replay({
        targets: [hookA],
        instanceId: 'rlogA',
        from: new Date(Date.now() - 60_000),
        to: new Date(),
        origin: 'rlogA',
        maxEvents: 1,
        wants: wantsAll,
      });
      expect(result.tooMany).toBe(true);
      const pending = await db.dataSource.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = 'hookA' AND status = 'pending'`);
      expect(pending[0].n).toBe(0);
    });
  });
});
