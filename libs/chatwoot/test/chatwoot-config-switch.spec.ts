import { ChatwootRepository, type ChatwootConfigValues, InstanceRepository } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';

jest.setTimeout(60_000);

/**
 * Pointing the bridge at another Chatwoot (url, account or inbox) forgets what belonged to the old one:
 * its contacts and conversations, and the message ids a receipt, a deletion or a reply would otherwise
 * reach in the new one. The links of agents' replies stay, without the old ids (never copied back).
 */
describe('ChatwootRepository.saveConfig, another Chatwoot', () => {
  let db: TestDatabase;
  let sut: ChatwootRepository;
  const instanceId = 'rcwswitch';
  const values: ChatwootConfigValues = {
    enabled: true,
    url: 'https://cw-one.example',
    accessToken: 'tok',
    accountId: 1,
    inboxId: 2,
    ignoreGroups: false,
    signMessages: false,
    createNewConversation: false,
  };
  const seed = async () => {
    await sut.saveChat(instanceId, {
      chatKey: '5511999@s.whatsapp.net',
      lid: '',
      contactId: 7,
      contactName: '~Ana',
      sourceId: 's',
      conversationId: 70,
      conversationStatus: 'open',
    });
    await sut.link(instanceId, { waMessageId: 'WA1', cwMessageId: 700, cwConversationId: 70, origin: 'whatsapp', chatJid: '5511999@s.whatsapp.net' });
    await sut.link(instanceId, { waMessageId: '3EB0AGENT', cwMessageId: 701, cwConversationId: 70, origin: 'chatwoot', chatJid: '5511999@s.whatsapp.net' });
  };

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new ChatwootRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-cw-switch', name: 'switch' });
  });
  afterAll(() => db.close());

  it('should keep everything when the same Chatwoot is saved again', async () => {
    await sut.saveConfig(instanceId, values, 'cw_secret');
    await seed();
    await sut.saveConfig(instanceId, { ...values, signMessages: true, accessToken: 'other' }, 'cw_unused');
    expect(await sut.findChat(instanceId, '5511999@s.whatsapp.net')).toMatchObject({ contactId: 7, conversationId: 70 });
    expect(await sut.linkOfWhatsApp(instanceId, 'WA1')).toMatchObject({ cwMessageId: 700 });
    expect(await sut.linkOfWhatsApp(instanceId, '3EB0AGENT')).toMatchObject({ cwMessageId: 701 });
  });

  it.each([{ inboxId: 3 }, { accountId: 9 }, { url: 'https://cw-two.example' }])('should forget the old Chatwoot ids when %j changes', async (change) => {
    await sut.saveConfig(instanceId, values, 'cw_secret');
    await seed();
    await sut.saveConfig(instanceId, { ...values, ...change }, 'cw_unused');
    expect(await sut.findChat(instanceId, '5511999@s.whatsapp.net')).toBeNull();
    expect(await sut.linkOfWhatsApp(instanceId, 'WA1')).toBeNull();
    expect(await sut.linkOfWhatsApp(instanceId, '3EB0AGENT')).toMatchObject({ origin: 'chatwoot', cwMessageId: null, cwConversationId: null });
    expect(await sut.linksOfChatwoot(instanceId, 701)).toEqual([]);
    expect((await sut.findConfig(instanceId))?.webhookSecret).toBe('cw_secret');
  });
});
