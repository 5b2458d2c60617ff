import { capturingTx, openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, MessageRepository } from '@gw/persistence';

/**
 * `POST /call/reject` finds the ringing call among the instance's recent calls. They are read by
 * `messages_calls`: before it, each request counted and sorted every message of the instance.
 */
describe("an instance's recent calls", () => {
  let db: TestDatabase;
  const instanceId = 'rrecentcalls';

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-recent-calls', name: 'c' });
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, text, from_me, message_type)
       SELECT $1, 'calls' || g, 'CALLS' || g, '55119' || (g % 300) || '@s.whatsapp.net', 1764400000000 + g * 1000, 'Read', 'message ' || g,
         g % 2 = 0, CASE WHEN g % 1000 = 0 THEN 'call' ELSE 'conversation' END
       FROM generate_series(1, 20000) g`,
      [instanceId],
    );
    await db.dataSource.query(`ANALYZE messages`);
  });
  afterAll(() => db.close());

  it('should answer the received calls, newest first', async () => {
    const { rows, total } = await new MessageRepository(db.dataSource).find(instanceId, { messageType: 'call', fromMe: false, limit: 5, offset: 0 });
    expect(total).toBe(0);
    expect(rows).toEqual([]);
    const sent = await new MessageRepository(db.dataSource).find(instanceId, { messageType: 'call', fromMe: true, limit: 5, offset: 0 });
    expect(sent.total).toBe(20);
    expect(sent.rows.map((row) => row.messageId)).toEqual(['CALLS20000', 'CALLS19000', 'CALLS18000', 'CALLS17000', 'CALLS16000']);
  });

  it('should read them by the calls index, not every message of the instance', async () => {
    const { tx: capturing, captured } = capturingTx((sql) => (sql.includes('count(*)') ? [{ total: '0' }] : []));
    await new MessageRepository(db.dataSource).within(capturing).find(instanceId, { messageType: 'call', fromMe: false, limit: 5, offset: 0 });
    expect(captured.length).toBe(2);
    for (const [sql, parameters] of captured) {
      const plan = ((await db.dataSource.query(`EXPLAIN ${sql}`, parameters)) as Array<{ 'QUERY PLAN': string }>).map((row) => row['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/messages_calls/);
      expect(plan).not.toMatch(/Seq Scan on messages/);
    }
  });
});
