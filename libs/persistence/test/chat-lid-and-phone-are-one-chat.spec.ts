import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { ChatRepository, InstanceRepository } from '@gw/persistence';

describe('a contact seen by LID and by phone number is one chat', () => {
  let db: TestDatabase;
  let counter = 0;
  const instanceId = 'rchattest';
  const newId = () => `rchat${counter++}`;
  const observe = (observation: Parameters<typeof ChatRepository.observeWithin>[2]) =>
    db.dataSource.transaction((manager) => ChatRepository.observeWithin(manager, instanceId, observation, newId));

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
});
