import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { ChatRepository, InstanceRepository } from '@gw/persistence';

describe('chat settings from the phone are applied and reported only when they change', () => {
  let db: TestDatabase;
  const instanceId = 'rchatstate';
  const apply = (jid: string, state: Parameters<ChatRepository['applyState']>[2]) =>
    db.dataSource.transaction((manager) => new ChatRepository(db.dataSource).within(manager).applyState(instanceId, jid, state));

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-chatstate', name: 'c' });
    await db.dataSource.transaction((manager) =>
      new ChatRepository(db.dataSource)
        .within(manager)
        .observe(instanceId, { waChatId: '5511900000009@s.whatsapp.net', waChatLid: '999@lid', waName: 'Dani' }, () => 'rchatstate1'),
    );
  });
  afterAll(() => db.close());

  it('should apply a change found by LID and keep the rest', async () => {
    const chat = await apply('999@lid', { pinned: true, muteEndTime: 1_800_000_000_000, waContactName: 'Dani (agenda)' });
    expect(chat).toMatchObject({
      id: 'rchatstate1',
      pinned: true,
      muteEndTime: 1_800_000_000_000,
      waName: 'Dani',
      waContactName: 'Dani (agenda)',
      name: 'Dani (agenda)',
      archived: false,
    });
  });

  it('should return null when nothing changes or no chat matches', async () => {
    expect(await apply('5511900000009@s.whatsapp.net', { pinned: true })).toBeNull();
    expect(await apply('nobody@lid', { archived: true })).toBeNull();
  });

  it('should merge group flags', async () => {
    expect(await apply('5511900000009@s.whatsapp.net', { groupFlags: { member: true } })).toMatchObject({ groupFlags: { member: true } });
    expect(await apply('5511900000009@s.whatsapp.net', { groupFlags: { member: true } })).toBeNull();
    expect(await apply('5511900000009@s.whatsapp.net', { groupFlags: { admin: true } })).toMatchObject({ groupFlags: { member: true, admin: true } });
  });
});
