import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { BlocklistRepository, ChatRepository, InstanceRepository, type BlockChange, type BlockedContact } from '@gw/persistence';

describe('blocklist changes are stored, mirrored on the chat, and reported once', () => {
  let db: TestDatabase;
  let sut: BlocklistRepository;
  const instanceId = 'rblocklist';
  const pn = '5511900000031@s.whatsapp.net';
  const lid = '31031@lid';
  const apply = (changes: BlockChange[]) =>
    db.dataSource.transaction((manager) => new BlocklistRepository(db.dataSource).within(manager).apply(instanceId, changes));
  const replace = (current: BlockedContact[]) =>
    db.dataSource.transaction((manager) => new BlocklistRepository(db.dataSource).within(manager).replace(instanceId, current));
  const blocked = async () =>
    (await db.dataSource.query(`SELECT blocked FROM chats WHERE instance_id = $1 AND wa_chatid = $2`, [instanceId, pn]))[0].blocked as boolean;

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new BlocklistRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-blocklist', name: 'b' });
    await db.dataSource.transaction((manager) =>
      new ChatRepository(db.dataSource).within(manager).observe(instanceId, { waChatId: pn, waChatLid: lid, waName: 'Rita' }, () => 'rblockchat1'),
    );
  });
  afterAll(() => db.close());

  it('should block once, whichever identity the second notice uses', async () => {
    expect(await apply([{ jid: pn, lid, action: 'block' }])).toEqual([{ jid: pn, lid, action: 'block' }]);
    expect(await blocked()).toBe(true);
    // The same contact again, known only by its LID this time: nothing new.
    expect(await apply([{ jid: lid, lid, action: 'block' }])).toEqual([]);
    expect(await sut.list(instanceId)).toEqual([{ jid: pn, lid }]);
  });

  it('should unblock by LID and report only the real change', async () => {
    expect(await apply([{ jid: lid, lid: '', action: 'unblock' }])).toEqual([{ jid: lid, lid: '', action: 'unblock' }]);
    expect(await blocked()).toBe(false);
    expect(await apply([{ jid: pn, lid, action: 'unblock' }])).toEqual([]);
    expect(await sut.list(instanceId)).toEqual([]);
  });

  it('should make the stored list equal to WhatsApp’s and return the differences', async () => {
    const other = '5511900000032@s.whatsapp.net';
    await apply([{ jid: other, lid: '', action: 'block' }]);
    const changes = await replace([{ jid: pn, lid }]);
    expect(changes).toEqual(
      expect.arrayContaining([
        { jid: other, lid: '', action: 'unblock' },
        { jid: pn, lid, action: 'block' },
      ]),
    );
    expect(changes).toHaveLength(2);
    expect(await replace([{ jid: pn, lid }])).toEqual([]);
    expect(await sut.list(instanceId)).toEqual([{ jid: pn, lid }]);
    expect(await blocked()).toBe(true);
  });
});
