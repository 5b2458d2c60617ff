import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, OutboxRepository } from '@gw/persistence';

/**
 * Issue #40: an outbox event keeps the `traceparent` it was written under in its own column (the relay
 * continues that trace), never in its payload; events without one, or written while tracing is off,
 * keep NULL. Traced or not, the events go in one JSON parameter through the same statement.
 */
describe('outbox events and their traceparent', () => {
  let db: TestDatabase;
  const instanceId = 'rtraceparent';
  const other = 'rtraceparent2';
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

  beforeAll(async () => {
    db = await openTestDatabase();
    const instances = new InstanceRepository(db.dataSource);
    await instances.create({ id: instanceId, token: 'tok-traceparent-1', name: 't1' });
    await instances.create({ id: other, token: 'tok-traceparent-2', name: 't2' });
  });
  afterAll(() => db.close());

  const stored = async (lastId: string | null | undefined, count: number) =>
    (await db.dataSource.query(`SELECT traceparent, payload FROM outbox_events WHERE id > $1::bigint - $2 AND id <= $1::bigint ORDER BY id`, [
      lastId,
      count,
    ])) as Array<{
      traceparent: string | null;
      payload: Record<string, unknown>;
    }>;

  it('should store each event traceparent beside its payload, in order, for one instance', async () => {
    const lastId = await new OutboxRepository(db.dataSource).insert(instanceId, [
      { eventType: 'messages', payload: { n: 1 }, traceparent },
      { eventType: 'messages', payload: { n: 2 } },
    ]);
    expect(await stored(lastId, 2)).toEqual([
      { traceparent, payload: { n: 1 } },
      { traceparent: null, payload: { n: 2 } },
    ]);
  });

  it('should store them for many instances in one statement', async () => {
    const lastIds = await new OutboxRepository(db.dataSource).insertMany([
      { instanceId, events: [{ eventType: 'messages', payload: { n: 3 }, traceparent }] },
      { instanceId: other, events: [{ eventType: 'chats', payload: { n: 4 } }] },
    ]);
    expect(await stored(lastIds.get(instanceId), 1)).toEqual([{ traceparent, payload: { n: 3 } }]);
    expect(await stored(lastIds.get(other), 1)).toEqual([{ traceparent: null, payload: { n: 4 } }]);
  });

  it('should write NULL in the column when no event has one, through the one statement (one prepared statement either way)', async () => {
    expect(OutboxRepository.insertStatement(instanceId, [{ eventType: 'messages', payload: {} }])?.text).toBe(
      OutboxRepository.insertStatement(instanceId, [{ eventType: 'messages', payload: {}, traceparent }])?.text,
    );
    const lastId = await new OutboxRepository(db.dataSource).insert(instanceId, [{ eventType: 'messages', payload: { n: 5 } }]);
    expect(await stored(lastId, 1)).toEqual([{ traceparent: null, payload: { n: 5 } }]);
  });
});
