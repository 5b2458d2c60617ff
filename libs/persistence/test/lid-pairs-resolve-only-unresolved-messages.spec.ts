import { capturingTx, genericPlan, openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, LidMappingRepository } from '@gw/persistence';

/**
 * Learning a LID's phone number fills in the messages stored while their sender was known only by that
 * LID. The statement goes out prepared (a generic plan), and must find those rows by
 * `messages_unresolved_sender`, never by reading the messages table: before, it named only half of that
 * index's predicate and read every message of every instance for each batch of pairs learned.
 */
describe('resolving messages by the LID pairs just learned', () => {
  let db: TestDatabase;
  let mappings: LidMappingRepository;
  const instanceId = 'rlidresolve';

  beforeAll(async () => {
    db = await openTestDatabase();
    mappings = new LidMappingRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-lid-resolve', name: 'l' });
    // A busy instance: 20,000 messages with known senders, 20 from a sender known only by its LID.
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, text, from_me, sender, sender_pn, sender_lid)
       SELECT $1, 'lidres' || g, 'LIDRES' || g, CASE WHEN g <= 20 THEN '777@lid' ELSE '55119' || (g % 300) || '@s.whatsapp.net' END,
         1764400000000 + g * 1000, '', 'message ' || g, false,
         CASE WHEN g <= 20 THEN '777@lid' ELSE '55119' || (g % 300) || '@s.whatsapp.net' END,
         CASE WHEN g <= 20 THEN '' ELSE '55119' || (g % 300) || '@s.whatsapp.net' END,
         CASE WHEN g <= 20 THEN '777@lid' ELSE (g % 300) || '@lid' END
       FROM generate_series(1, 20000) g`,
      [instanceId],
    );
    await db.dataSource.query(`ANALYZE messages`);
  });
  afterAll(() => db.close());

  it('should fill in the phone number of the rows from that LID only', async () => {
    expect(await mappings.resolveMessages(instanceId, [{ lid: '777@lid', pn: '5511777@s.whatsapp.net' }])).toBe(20);
    const rows: Array<{ chat_id: string; sender_pn: string; n: number }> = await db.dataSource.query(
      `SELECT chat_id, sender_pn, count(*)::int AS n FROM messages WHERE instance_id = $1 AND sender_lid = '777@lid' GROUP BY 1, 2`,
      [instanceId],
    );
    expect(rows).toEqual([{ chat_id: '5511777@s.whatsapp.net', sender_pn: '5511777@s.whatsapp.net', n: 20 }]);
    expect(await mappings.resolveMessages(instanceId, [{ lid: '777@lid', pn: '5511777@s.whatsapp.net' }])).toBe(0);
  });

  it('should find the rows by the unresolved senders index in its generic plan', async () => {
    const { tx: capturing, captured } = capturingTx();
    await mappings.within(capturing).resolveMessages(instanceId, [
      { lid: '1@lid', pn: '551@s.whatsapp.net' },
      { lid: '2@lid', pn: '552@s.whatsapp.net' },
    ]);
    const [sql, parameters] = captured[0];
    const plan = await genericPlan(db.dataSource, sql, parameters);
    expect(plan).toContain('messages_unresolved_sender');
    expect(plan).not.toMatch(/Seq Scan on messages/);
  });
});
