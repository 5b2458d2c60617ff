import { capturingTx, executedPlan, openTestDatabase, rowsRead, type TestDatabase } from '@gw/testing';
import { ChatRepository, ContactRepository, InstanceRepository } from '@gw/persistence';

/**
 * A history chunk's chats and contacts are created in one statement each (createMissing). Each input is
 * looked up by the indexes of its identifiers: the chats' statement used to compare every input with
 * every chat of the instance, and both read every contact without a LID for each input without one.
 */
describe("a history chunk's chats and contacts", () => {
  let db: TestDatabase;
  const instanceId = 'rhistcreate';
  const { tx: capturing, captured } = capturingTx();
  // A chunk of 400 chats, half known by their number, a quarter by their LID too, a quarter new.
  const chunk = Array.from({ length: 400 }, (_, i) => ({
    pn: i % 4 === 3 ? '' : `5511800${i}@s.whatsapp.net`,
    lid: i % 2 === 0 ? `9${i}@lid` : '',
    isGroup: false,
  }));

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-hist-create', name: 'h' });
    // A busy instance: 3,000 chats and 3,000 contacts, half of them without a LID.
    await db.dataSource.query(
      `INSERT INTO chats (instance_id, id, wa_chatid, wa_chatlid) SELECT $1, 'hc' || g, '5511800' || g || '@s.whatsapp.net',
         CASE WHEN g % 2 = 0 THEN '9' || g || '@lid' ELSE '' END FROM generate_series(1, 3000) g`,
      [instanceId],
    );
    await db.dataSource.query(
      `INSERT INTO contacts (instance_id, jid, lid, contact_name) SELECT $1, '5511800' || g || '@s.whatsapp.net',
         CASE WHEN g % 2 = 0 THEN '9' || g || '@lid' ELSE '' END, 'Contact ' || g FROM generate_series(1, 3000) g`,
      [instanceId],
    );
    await db.dataSource.query(`ANALYZE chats`);
    await db.dataSource.query(`ANALYZE contacts`);
  });
  afterAll(() => db.close());

  /** The rows the executed statement read from `table` (in a transaction rolled back after). */
  const read = async (sql: string, parameters: unknown[], table: string): Promise<number> =>
    rowsRead(await executedPlan(db.dataSource, sql, parameters), table);

  it('should look each chat up by its identifiers', async () => {
    captured.length = 0;
    let next = 0;
    await new ChatRepository(db.dataSource).within(capturing).createMissing(instanceId, chunk, () => `hcnew${next++}`);
    const [sql, parameters] = captured[captured.length - 1];
    expect(await read(sql, parameters, 'chats')).toBeLessThan(2 * chunk.length);
    expect(await read(sql, parameters, 'contacts')).toBeLessThan(2 * chunk.length);
  });

  it('should look each contact up by its identifiers', async () => {
    captured.length = 0;
    await new ContactRepository(db.dataSource).within(capturing).createMissing(
      instanceId,
      chunk.map((chat) => ({ jid: chat.pn, lid: chat.lid })),
    );
    const [sql, parameters] = captured[captured.length - 1];
    expect(await read(sql, parameters, 'contacts')).toBeLessThan(2 * chunk.length);
  });

  it('should create only the chats and contacts no row knows', async () => {
    let next = 0;
    const created = await new ChatRepository(db.dataSource).createMissing(instanceId, chunk, () => `hcnew${next++}`);
    // Every number of the chunk but 55118000 is stored (1..3,000); the inputs with neither identifier are left out.
    expect(created).toBe(1);
    const contacts = await new ContactRepository(db.dataSource).createMissing(
      instanceId,
      chunk.map((chat) => ({ jid: chat.pn, lid: chat.lid })),
    );
    expect(contacts.map((contact) => contact.jid)).toEqual(['55118000@s.whatsapp.net']);
  });
});
