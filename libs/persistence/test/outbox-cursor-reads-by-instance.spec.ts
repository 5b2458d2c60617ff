import { capturingTx, genericPlan, openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, OutboxCursorRepository, OutboxRepository } from '@gw/persistence';

/**
 * A consumer's step and peek read the instance's events after its cursor by the `(instance_id, tx, id)`
 * index, however many events the instance had before. The case that went wrong: one instance's events
 * are most of the outbox (a deployment of one number), the statistics say so, and the planner read the
 * primary key from the cursor's floor (0) on: every event the instance ever had, at every step.
 */
describe('an outbox cursor reads only what follows it', () => {
  let db: TestDatabase;
  const instanceId = 'rcursorplan';
  const consumer = 'plan-test';

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-cursor-plan', name: 'c' });
    // Far more of this instance's events than the other suites write, ten per transaction as a busy
    // instance's inbound writes make them (all in the past), then the cursor after them. Their ids lie
    // below the oldest transaction still running anywhere on the server (the snapshot's xmin): below the
    // current one instead, another process's transaction running then (another suite, a bench) had its
    // id among them, was pending on the new cursor, and its ten fake events were handed over with 'new'.
    await db.dataSource.query(
      `INSERT INTO outbox_events (instance_id, tx, event_type, chat_id, payload)
       SELECT $1, (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint - 3001 + g / 10, 'messages', '5511900000001@s.whatsapp.net',
         jsonb_build_object('n', g, 'text', repeat('x', 200))
       FROM generate_series(1, 30000) g`,
      [instanceId],
    );
    await db.dataSource.query(`ANALYZE outbox_events`);
    await new OutboxCursorRepository(db.dataSource).follow(consumer, [instanceId]);
    await new OutboxRepository(db.dataSource).insert(instanceId, [{ eventType: 'messages', payload: { n: 'new' } }]);
  });
  afterAll(() => db.close());

  /**
   * EXPLAIN ANALYZE of `sql` in a transaction rolled back after (a step moves its cursor), with two of
   * the old transactions pending on the cursor (as if they had been running when it moved past them).
   */
  const explain = async (sql: string, parameters: unknown[]): Promise<string> => {
    const runner = db.dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `UPDATE outbox_cursors SET pending = (SELECT array_agg(DISTINCT tx ORDER BY tx) FROM (SELECT tx FROM outbox_events WHERE instance_id = $2 ORDER BY id LIMIT 15) t)
         WHERE consumer = $1 AND instance_id = $2`,
        [consumer, instanceId],
      );
      const plan: Array<{ 'QUERY PLAN': string }> = await runner.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, parameters);
      return plan.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  };
  const stepParameters = [consumer, instanceId, 100, ['$.message.wasSentByApi ? (@ == true)'], ['messages']];
  const peekParameters = [consumer, instanceId, 100, ['messages'], ['$.message.wasSentByApi ? (@ == true)']];

  it.each([
    ['step', OutboxCursorRepository.STEP, stepParameters],
    ['peek', OutboxCursorRepository.PEEK, peekParameters],
  ])('should read the %s by the instance index, a few pages, in its plan and its prepared generic plan', async (_name, sql, parameters) => {
    for (const plan of [await explain(sql, parameters), await genericPlan(db.dataSource, sql, parameters)]) {
      expect(plan).toMatch(/outbox_events_instance_tx/);
      expect(plan).not.toMatch(/outbox_events_pkey|Seq Scan on outbox_events/);
    }
    // What the executed plan touched: the cursor, the pending transactions' 15 events, the index's edge
    // and the one new event, not 30,000 events.
    const hits = [...(await explain(sql, parameters)).matchAll(/shared hit=(\d+)/g)].map((match) => Number(match[1]));
    expect(Math.max(...hits)).toBeLessThan(60);
  });

  it('should tell the cursor is behind by the instance index, not a scan of the outbox (every follower poll)', async () => {
    const { tx: capturing, captured } = capturingTx();
    await new OutboxCursorRepository(db.dataSource).within(capturing).behind(consumer, 100);
    const [sql, parameters] = captured[0];
    const plan = await explain(sql, parameters);
    expect(plan).toMatch(/outbox_events_instance_tx/);
    expect(plan).not.toMatch(/Seq Scan on outbox_events/);
    const hits = [...plan.matchAll(/shared hit=(\d+)/g)].map((match) => Number(match[1]));
    expect(Math.max(...hits)).toBeLessThan(60);
    expect(await new OutboxCursorRepository(db.dataSource).behind(consumer, 100)).toEqual([instanceId]);
  });

  it('should hand over the one event after the cursor', async () => {
    const step = await new OutboxCursorRepository(db.dataSource).step(consumer, instanceId, 100, async (_manager, _instance, events) =>
      events.map((event) => event.payload.n),
    );
    expect(step).toMatchObject({ busy: false, read: 1, handled: ['new'] });
  });
});
