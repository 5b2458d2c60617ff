import { capturingTx, genericPlan, openTestDatabase, planChoices, type TestDatabase } from '@gw/testing';
import { InstanceRepository, MessageRepository } from '@gw/persistence';

/**
 * A receipt's status change (`advanceStatus`: delivered, read, played) runs for nearly every message
 * sent and received. It goes out prepared; Postgres must keep one plan for it and read each message by
 * its id. With the ids as a plain array parameter, Postgres found a plan made for each call's array
 * cheaper than the generic one and planned it again on every call (pg_stat_statements over
 * bench/chatbot: 562 plans for 579 calls).
 */
describe("a receipt's status change", () => {
  let db: TestDatabase;
  const instanceId = 'rstatusplan';
  const { tx: capturing, captured } = capturingTx();

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-status-plan', name: 's' });
    // A busy instance: 20,000 messages over 500 chats.
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, chat_lid, message_timestamp, status, text, from_me)
       SELECT $1, 'statusplan' || g, 'STATUSPLAN' || g, '55119' || (g % 500 + 1) || '@s.whatsapp.net', '8' || (g % 500 + 1) || '@lid',
         1764400000000 + g * 1000, 'ServerAck', 'message ' || g, true
       FROM generate_series(1, 20000) g`,
      [instanceId],
    );
    await db.dataSource.query(`ANALYZE messages`);
    await new MessageRepository(db.dataSource).within(capturing).advanceStatus(instanceId, ['STATUSPLAN7', 'STATUSPLAN8'], 'Delivered');
  });
  afterAll(() => db.close());

  it('should go out prepared', () => {
    expect(captured).toHaveLength(1);
    expect(captured[0][0]).toContain('/* prepared */');
  });

  it('should read each message by its id in the generic plan', async () => {
    const [sql, parameters] = captured[0];
    const plan = await genericPlan(db.dataSource, sql, parameters);
    expect(plan).toMatch(/messages_instance_id_message_id_key/);
    expect(plan).not.toMatch(/Seq Scan on messages\b/);
  });

  it('should let Postgres keep the generic plan', async () => {
    const [sql, parameters] = captured[0];
    expect(await planChoices(db.dataSource, sql, parameters, 10)).toEqual({ custom: 5, generic: 5 });
  });

  it('should change only what is further along, and answer the rows it changed', async () => {
    const messages = new MessageRepository(db.dataSource);
    const changed = await messages.advanceStatus(instanceId, ['STATUSPLAN1', 'STATUSPLAN2', 'NOT-STORED'], 'Read');
    expect(changed.map((row) => row.messageId).sort()).toEqual(['STATUSPLAN1', 'STATUSPLAN2']);
    expect(await messages.advanceStatus(instanceId, ['STATUSPLAN1'], 'Delivered')).toEqual([]);
  });
});
