import { genericPlan, openTestDatabase, type TestDatabase } from '@gw/testing';
import { ChatRepository, ContactRepository, InboundGroupRepository, InstanceRepository } from '@gw/persistence';

describe('a contact seen by LID and by phone number is one chat', () => {
  let db: TestDatabase;
  let counter = 0;
  const instanceId = 'rchattest';
  const newId = () => `rchat${counter++}`;
  const observe = (observation: Parameters<ChatRepository['observe']>[1]) =>
    db.dataSource.transaction((manager) => new ChatRepository(db.dataSource).within(manager).observe(instanceId, observation, newId));

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-chat', name: 'c' });
  });
  afterAll(() => db.close());

  it('should attach the LID to a chat first seen by phone number', async () => {
    const first = await observe({ waChatId: '5511900000001@s.whatsapp.net', waName: 'Ana' });
    const second = await observe({ waChatId: '5511900000001@s.whatsapp.net', waChatLid: '111@lid' });
    expect(second.chat.id).toBe(first.chat.id);
    expect(second.chat).toMatchObject({ waChatId: '5511900000001@s.whatsapp.net', waChatLid: '111@lid', waName: 'Ana' });
  });

  it('should name a chat created after its number was saved in the address book with the saved name', async () => {
    // `/contact/add` before the first message: the contact exists, the chat does not yet.
    await db.dataSource.transaction((manager) =>
      new ContactRepository(db.dataSource).within(manager).setAddressBook(instanceId, '5511900000009@s.whatsapp.net', 'Ana Saved'),
    );
    const created = await observe({ waChatId: '5511900000009@s.whatsapp.net', waName: 'Ana' });
    expect(created).toMatchObject({ created: true, chat: { waContactName: 'Ana Saved', waName: 'Ana' } });
    // No saved name: none invented.
    expect((await observe({ waChatId: '5511900000010@s.whatsapp.net' })).chat.waContactName).toBe('');
  });

  it('should find a chat by its LID alone', async () => {
    const byLid = await observe({
      waChatLid: '111@lid',
      lastMessage: { timestamp: 1000, type: 'Conversation', textVote: 'oi', sender: '111@lid', incoming: true },
    });
    expect(byLid.created).toBe(false);
    expect(byLid.chat).toMatchObject({ waChatId: '5511900000001@s.whatsapp.net', unreadCount: 1, lastMessageTextVote: 'oi' });
  });

  it('should merge two chats that each knew one side', async () => {
    const byPhone = await observe({ waChatId: '5511900000002@s.whatsapp.net', waName: 'Bruno' });
    const byLid = await observe({
      waChatLid: '222@lid',
      lastMessage: { timestamp: 5, type: 'Conversation', textVote: 'x', sender: '222@lid', incoming: true },
    });
    expect(byLid.chat.id).not.toBe(byPhone.chat.id);
    const both = await observe({ waChatId: '5511900000002@s.whatsapp.net', waChatLid: '222@lid' });
    expect(both.merged).toBe(true);
    expect(both.chat).toMatchObject({ id: byPhone.chat.id, waChatLid: '222@lid', waName: 'Bruno', unreadCount: 1 });
    const rows: Array<{ n: number }> = await db.dataSource.query(
      `SELECT count(*)::int AS n FROM chats WHERE instance_id = $1 AND (wa_chatid = $2 OR wa_chatlid = $3)`,
      [instanceId, '5511900000002@s.whatsapp.net', '222@lid'],
    );
    expect(rows[0].n).toBe(1);
  });

  it('should keep the newest last message when messages arrive out of order', async () => {
    await observe({
      waChatId: '5511900000003@s.whatsapp.net',
      lastMessage: { timestamp: 200, type: 'Conversation', textVote: 'new', sender: 'a', incoming: false },
    });
    const late = await observe({
      waChatId: '5511900000003@s.whatsapp.net',
      lastMessage: { timestamp: 100, type: 'Conversation', textVote: 'old', sender: 'a', incoming: false },
    });
    expect(late.chat).toMatchObject({ lastMsgTimestamp: 200, lastMessageTextVote: 'new' });
  });
  it("should apply many instances' observations in one statement and still create, merge and learn", async () => {
    const other = 'rchattest2';
    await new InstanceRepository(db.dataSource).create({ id: other, token: 'tok-chat2', name: 'c2' });
    const known = (await observe({ waChatId: '5511900000050@s.whatsapp.net', waChatLid: '550@lid', waName: 'Caio' })).chat;
    const otherKnown = (
      await db.dataSource.transaction((manager) =>
        new ChatRepository(db.dataSource).within(manager).observe(other, { waChatId: '5511900000051@s.whatsapp.net' }, newId),
      )
    ).chat;
    await observe({ waChatId: '5511900000052@s.whatsapp.net' });
    const message = (timestamp: number, textVote: string) => ({ timestamp, type: 'Conversation', textVote, sender: 's', incoming: true });
    const statements: string[] = [];
    const rows = await db.dataSource.transaction(async (manager) => {
      const query = manager.query.bind(manager);
      jest.spyOn(manager, 'query').mockImplementation((sql: string, parameters?: Parameters<typeof query>[1]) => {
        statements.push(sql.replace(/\s+/g, ' ').slice(0, 40));
        return query(sql, parameters);
      });
      const written = await new InboundGroupRepository(db.dataSource).within(manager).write({
        chats: [
          // known by both identifiers, here by its LID: found by the third observation too, so folded with it (ADR 0051)
          { instanceId, observation: { waChatLid: '550@lid', lastMessage: message(10, 'one') }, newId },
          // another instance's known chat: the one statement
          { instanceId: other, observation: { waChatId: '5511900000051@s.whatsapp.net', waName: 'Dora', lastMessage: message(11, 'two') }, newId },
          // the first chat again, by its phone number: applied on the first one's change, in the same statement
          { instanceId, observation: { waChatId: '5511900000050@s.whatsapp.net', lastMessage: message(12, 'three') }, newId },
        ],
      });
      return written.chats;
    });
    expect(rows.map((row) => [row.id, row.lastMessageTextVote, row.unreadCount])).toEqual([
      [known.id, 'one', 1],
      [otherKnown.id, 'two', 1],
      [known.id, 'three', 2],
    ]);
    expect(rows[1]).toMatchObject({ instanceId: other, waName: 'Dora', name: 'Dora' });
    // one statement for the round, the chat it found twice included
    expect(statements.filter((sql) => sql.includes('UPDATE') || sql.includes('WITH'))).toHaveLength(1);

    // Not known as given: a new chat, a LID to learn; both go through the locked path, the known one stays in the statement.
    const { chats: mixed } = await db.dataSource.transaction((manager) =>
      new InboundGroupRepository(db.dataSource).within(manager).write({
        chats: [
          { instanceId, observation: { waChatId: '5511900000053@s.whatsapp.net', waName: 'Eva' }, newId },
          { instanceId: other, observation: { waChatId: '5511900000051@s.whatsapp.net', waChatLid: '551@lid' }, newId },
        ],
      }),
    );
    expect(mixed[0]).toMatchObject({ waChatId: '5511900000053@s.whatsapp.net', waName: 'Eva' });
    expect(mixed[1]).toMatchObject({ id: otherKnown.id, waChatLid: '551@lid', waName: 'Dora' });
    const [{ n }]: Array<{ n: number }> = await db.dataSource.query(`SELECT count(*)::int AS n FROM chats WHERE instance_id = $1 AND wa_chatid = $2`, [
      instanceId,
      '5511900000053@s.whatsapp.net',
    ]);
    expect(n).toBe(1);
  });
  it("should find an observed chat by its indexes in the prepared statements' generic plans, not by reading the instance's chats", async () => {
    await db.dataSource.query(
      `INSERT INTO chats (instance_id, id, wa_chatid, wa_chatlid) SELECT $1, 'bulk' || g, '55119' || g || '@s.whatsapp.net', '9' || g || '@lid' FROM generate_series(1, 3000) g`,
      [instanceId],
    );
    await db.dataSource.query(`ANALYZE chats`);
    const captured: Array<[string, unknown[]]> = [];
    await db.dataSource
      .transaction(async (manager) => {
        const query = manager.query.bind(manager);
        jest.spyOn(manager, 'query').mockImplementation((sql: string, parameters?: Parameters<typeof query>[1]) => {
          if (sql.includes('UPDATE chats')) captured.push([sql, parameters as unknown[]]);
          return query(sql, parameters);
        });
        await new ChatRepository(db.dataSource).within(manager).observe(instanceId, { waChatLid: '917@lid' }, newId);
        await new InboundGroupRepository(db.dataSource).within(manager).write({
          chats: [
            { instanceId, observation: { waChatId: '5511918@s.whatsapp.net' }, newId },
            { instanceId: 'rchattest2', observation: { waChatId: '5511900000051@s.whatsapp.net' }, newId },
          ],
        });
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(captured).toHaveLength(2);
    for (const [sql, parameters] of captured) {
      const text = await genericPlan(db.dataSource, sql, parameters);
      expect(text).toMatch(/chats_chat(lid|id)/);
      // No read of every chat of the instance: no scan, and no index lookup by the instance alone.
      expect(text).not.toMatch(/Seq Scan on chats|chats_recent/);
      expect(text).not.toMatch(/Index Cond: \(instance_id = [^()]*\)$/m);
    }
  });
});
