import { newMessageFixture, openTestDatabase, type TestDatabase } from '@gw/testing';
import { ChatRepository, InboundGroupRepository, InstanceRepository, LeaseRepository, MessageRepository, type InboundGroupWrites } from '@gw/persistence';

describe('InboundGroupRepository.writeWithin (a round of the inbound group transaction)', () => {
  let db: TestDatabase;
  const ids = ['igr-a', 'igr-b', 'igr-c'];
  const chat = '5511900000088@s.whatsapp.net';
  const round = (n: number): InboundGroupWrites => ({
    statuses: [{ instanceId: 'igr-a', messageIds: [`A${n}`], status: 'Delivered' }],
    copies: [newMessageFixture('igr-b', { id: `id-B${n}`, messageId: `B${n}`, chatId: chat, fromMe: true, status: 'Sent', raw: `{"n":${n}}` })],
    chats: [
      {
        instanceId: 'igr-c',
        observation: { waChatId: chat, lastMessage: { timestamp: 1000 + n, type: 'Conversation', textVote: `C${n}`, sender: 'me', incoming: false } },
        newId: () => 'unused',
      },
    ],
  });

  beforeAll(async () => {
    db = await openTestDatabase();
    for (const id of ids) await new InstanceRepository(db.dataSource).create({ id, token: `tok-${id}`, name: id });
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, from_me) SELECT 'igr-a', 'id-A' || g, 'A' || g, $1, g, 'Sent', true FROM generate_series(0, 20) g`,
      [chat],
    );
    await db.dataSource.transaction((manager) => ChatRepository.observeWithin(manager, 'igr-c', { waChatId: chat }, () => 'chat-c'));
  });
  afterAll(() => db.close());

  it("should write a receipt, a copy and a chat of three instances in one statement, each answered as its kind's own statement did", async () => {
    const texts: string[] = [];
    const written = await db.dataSource.transaction(async (manager) => {
      const query = manager.query.bind(manager);
      jest.spyOn(manager, 'query').mockImplementation((sql: string, parameters?: Parameters<typeof query>[1]) => {
        texts.push(sql);
        return query(sql, parameters);
      });
      return InboundGroupRepository.writeWithin(manager, round(0));
    });
    expect(texts).toHaveLength(1);
    expect(written.statuses).toEqual([{ instanceId: 'igr-a', messageId: 'A0', chatId: chat, chatLid: '', fromMe: true, isGroup: false, status: 'Delivered' }]);
    expect(written.copies).toHaveLength(1);
    expect(written.copies[0]).toMatchObject({ created: true, advanced: false });
    // Every column of the answered rows in its own type: the rows as read back.
    expect(written.copies[0]?.row).toEqual(await new MessageRepository(db.dataSource).findOne('igr-b', 'B0'));
    expect(written.chats).toHaveLength(1);
    expect(written.chats[0]).toEqual(await new ChatRepository(db.dataSource).findByJid('igr-c', chat));
    expect(written.chats[0]).toMatchObject({ id: 'chat-c', lastMessageTextVote: 'C0', lastMsgTimestamp: 1000 });

    // The same copy again changes nothing (Baileys emits some messages twice); an empty round writes nothing.
    const again = await db.dataSource.transaction((manager) => InboundGroupRepository.writeWithin(manager, { copies: round(0).copies }));
    expect(again).toEqual({ statuses: [], copies: [null], chats: [] });
    expect(await db.dataSource.transaction((manager) => InboundGroupRepository.writeWithin(manager, {}))).toEqual({ statuses: [], copies: [], chats: [] });
  });

  it('should run its generic plan in a group transaction, not plan each round again', async () => {
    const leases = new LeaseRepository(db.dataSource);
    const held = await Promise.all(ids.map(async (id) => (await leases.claim(id, 'w-igr', 60_000))!));
    const plans = await LeaseRepository.fencedGroupTransaction(db.dataSource, held, async (manager) => {
      for (let n = 1; n <= 12; n++) await InboundGroupRepository.writeWithin(manager, round(n));
      const [mode]: Array<{ plan_cache_mode: string }> = await manager.query(`SHOW plan_cache_mode`);
      const statements: Array<{ generic_plans: string; custom_plans: string }> = await manager.query(
        `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%s_input AS%'`,
      );
      return { mode: mode.plan_cache_mode, statements };
    });
    expect(plans.mode).toBe('force_generic_plan');
    // Sizes vary from round to round in use; with plan_cache_mode auto Postgres planned this statement on every execution.
    expect(plans.statements).toEqual([{ generic_plans: expect.any(String), custom_plans: '0' }]);
    expect(Number(plans.statements[0].generic_plans)).toBeGreaterThanOrEqual(10);
    // Outside the group transaction the connection is back to the default.
    const [after]: Array<{ plan_cache_mode: string }> = await db.dataSource.query(`SHOW plan_cache_mode`);
    expect(after.plan_cache_mode).toBe('auto');
  });
});
