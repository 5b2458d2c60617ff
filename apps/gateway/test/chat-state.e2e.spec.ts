import { nextPhone, Stack, waitFor } from './support/stack';

interface PhoneChat {
  jid: string;
  pinned: boolean;
  archived: boolean;
  muteEndTime: number | null;
  read: boolean | null;
  cleared: boolean;
  deleted: boolean;
}

/**
 * `/chat/pin`, `/chat/archive`, `/chat/mute`, `/chat/read` through HTTP: app-state patches by real
 * Baileys that the simulated phone applies to its chat list, the stored chat following with a `chats` event.
 */
describe('chat state (HTTP → worker → Baileys chatModify → the phone’s chat list)', () => {
  const stack = new Stack();
  let token: string;
  let phone: string;
  let contact: string;
  let chatJid: string;

  const call = (path: string, body: unknown, as = token) => stack.gw.call('POST', path, { token: as, body });
  const phoneChat = async () => (await stack.control<{ chats: PhoneChat[] }>('GET', `/sim/accounts/${phone}/chats`)).chats.find((chat) => chat.jid === chatJid);
  const storedChat = async () => {
    const { body } = await call('/chat/find', { wa_chatid: chatJid });
    return body.chats[0] as Record<string, unknown>;
  };
  const chatsEvents = () =>
    stack.db.dataSource
      .query(`SELECT payload FROM outbox_events WHERE event_type = 'chats' ORDER BY id`)
      .then((rows: Array<{ payload: Record<string, any> }>) => rows.map((row) => row.payload));

  beforeAll(async () => {
    await stack.start();
    ({ token, phone } = await stack.connectedInstance('chat-state'));
    contact = nextPhone('5585');
    chatJid = `${contact}@s.whatsapp.net`;
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Bia' });
    await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, text: 'oi' });
    await waitFor(
      () => storedChat(),
      (chat) => chat?.wa_unreadCount === 1,
      20_000,
      'the contact’s chat, unread',
    );
  }, 90_000);
  afterAll(() => stack.stop());

  it('should pin and unpin the chat on the phone, the stored chat following with a chats event', async () => {
    const before = (await chatsEvents()).length;
    expect(await call('/chat/pin', { number: contact, pin: true })).toEqual({ status: 200, body: { response: 'Chat pinned' } });
    expect(await phoneChat()).toMatchObject({ pinned: true });
    expect(await storedChat()).toMatchObject({ wa_isPinned: true });
    const events = (await chatsEvents()).slice(before);
    expect(events.some((event) => JSON.stringify(event).includes(chatJid) && JSON.stringify(event).includes('"wa_isPinned":true'))).toBe(true);

    expect(await call('/chat/pin', { number: `+${contact}`, pin: false })).toEqual({ status: 200, body: { response: 'Chat unpinned' } });
    expect(await phoneChat()).toMatchObject({ pinned: false });
    expect(await storedChat()).toMatchObject({ wa_isPinned: false });
  });

  it('should archive and unarchive the chat', async () => {
    expect(await call('/chat/archive', { number: chatJid, archive: true })).toEqual({ status: 200, body: { response: 'Chat updated successfully' } });
    expect(await phoneChat()).toMatchObject({ archived: true });
    expect(await storedChat()).toMatchObject({ wa_archived: true });
    expect(await call('/chat/archive', { number: contact, archive: false })).toEqual({ status: 200, body: { response: 'Chat updated successfully' } });
    expect(await phoneChat()).toMatchObject({ archived: false });
    expect(await storedChat()).toMatchObject({ wa_archived: false });
  });

  it('should mute the chat for 8 hours, a week or for ever, and unmute it', async () => {
    const ok = { status: 200, body: { response: 'Chat mute settings updated successfully' } };
    const started = Date.now();
    expect(await call('/chat/mute', { number: contact, muteEndTime: 8 })).toEqual(ok);
    const eight = (await phoneChat())!.muteEndTime!;
    expect(eight).toBeGreaterThanOrEqual(started + 8 * 3_600_000);
    expect(eight).toBeLessThan(Date.now() + 8 * 3_600_000 + 1);
    expect(await storedChat()).toMatchObject({ wa_muteEndTime: eight });
    expect(await call('/chat/mute', { number: contact, muteEndTime: 168 })).toEqual(ok);
    expect((await phoneChat())!.muteEndTime).toBeGreaterThanOrEqual(started + 168 * 3_600_000);
    expect(await call('/chat/mute', { number: contact, muteEndTime: -1 })).toEqual(ok);
    expect(await phoneChat()).toMatchObject({ muteEndTime: -1 });
    expect(await storedChat()).toMatchObject({ wa_muteEndTime: -1 });
    expect(await call('/chat/mute', { number: contact, muteEndTime: 0 })).toEqual(ok);
    expect(await phoneChat()).toMatchObject({ muteEndTime: null });
    expect(await storedChat()).toMatchObject({ wa_muteEndTime: 0 });
  });

  it('should mark the chat read (unread count 0) and unread, up to its last message', async () => {
    const ok = { status: 200, body: { response: 'Chat read status updated successfully' } };
    expect(await call('/chat/read', { number: contact, read: true })).toEqual(ok);
    expect(await phoneChat()).toMatchObject({ read: true });
    expect(await storedChat()).toMatchObject({ wa_unreadCount: 0 });
    expect(await call('/chat/read', { number: contact, read: false })).toEqual(ok);
    expect(await phoneChat()).toMatchObject({ read: false });
    // The patch names the chat's last message, as WhatsApp's does.
    const state = await stack.control<Record<string, { mutations: Array<{ index: string[]; action: Record<string, any> }> }>>(
      'GET',
      `/sim/accounts/${phone}/app-state`,
    );
    const marks = Object.values(state)
      .flatMap((collection) => collection.mutations)
      .filter((mutation) => mutation.index?.[0] === 'markChatAsRead');
    expect(marks.at(-1)?.action.markChatAsReadAction.messageRange.messages[0].key).toMatchObject({ remoteJid: chatJid, fromMe: false });
  });

  describe('POST /chat/delete', () => {
    const messagesOf = async (jid: string) => (await call('/message/find', { chatid: jid })).body.messages as unknown[];

    it('should clear the chat on WhatsApp and keep what is stored', async () => {
      const { status, body } = await call('/chat/delete', { number: contact, clearChatWhatsApp: true, deleteChatWhatsApp: true });
      expect(status).toBe(200);
      expect(body).toEqual({ response: 'Chat deletion process completed', actions: ['Chat cleared on WhatsApp'], errors: [] });
      expect(await phoneChat()).toMatchObject({ cleared: true, deleted: false });
      expect(await messagesOf(chatJid)).toHaveLength(1);
    });

    it('should only clear a group chat asked to be deleted', async () => {
      const group = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: contact, subject: 'Turma', participants: [phone] });
      const { body } = await call('/chat/delete', { number: group.jid, deleteChatWhatsApp: true });
      expect(body.actions).toEqual(['Group chat cleared on WhatsApp (a group chat is not deleted)']);
      const chats = (await stack.control<{ chats: PhoneChat[] }>('GET', `/sim/accounts/${phone}/chats`)).chats;
      expect(chats.find((chat) => chat.jid === group.jid)).toMatchObject({ cleared: true, deleted: false });
    });

    it('should list a WhatsApp refusal in errors when stored data goes too, and answer it as 502 alone', async () => {
      await stack.control('POST', '/sim/faults', { kind: 'app-state', code: 500, device: phone });
      const refused = await call('/chat/delete', { number: contact, deleteChatWhatsApp: true });
      expect(refused.status).toBe(502);
      await stack.control('POST', '/sim/faults', { kind: 'app-state', code: 500, device: phone });
      const partly = await call('/chat/delete', { number: contact, deleteChatWhatsApp: true, deleteMessagesDB: true });
      expect(partly.status).toBe(200);
      expect(partly.body.actions).toEqual(['Messages associated with chat deleted from database: 1']);
      expect(partly.body.errors).toEqual([expect.stringMatching(/^Error deleting chat on WhatsApp: WhatsApp refused the chat change \(500\)/)]);
      expect(await phoneChat()).toMatchObject({ deleted: false });
      expect(await messagesOf(chatJid)).toHaveLength(0);
    });

    it('should delete the chat from WhatsApp and the stored chat and messages', async () => {
      await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, text: 'de novo' });
      await waitFor(
        () => messagesOf(chatJid),
        (messages) => messages.length === 1,
        20_000,
        'the new message',
      );
      const { status, body } = await call('/chat/delete', { number: contact, deleteChatWhatsApp: true, deleteChatDB: true, deleteMessagesDB: true });
      expect(status).toBe(200);
      expect(body).toEqual({
        response: 'Chat deletion process completed',
        actions: ['Chat deleted from WhatsApp', 'Chat deleted from database', 'Messages associated with chat deleted from database: 1'],
        errors: [],
      });
      expect(await phoneChat()).toMatchObject({ deleted: true, pinned: false });
      expect(await messagesOf(chatJid)).toHaveLength(0);
      expect((await call('/chat/find', { wa_chatid: chatJid })).body.chats).toEqual([]);
      expect(await call('/chat/delete', { number: contact, deleteChatDB: true })).toEqual({
        status: 200,
        body: { response: 'Chat deletion process completed', actions: ['Chat not found in database'], errors: [] },
      });
    });

    it('should answer 400 without a number, with one it cannot parse, or with nothing to do', async () => {
      expect(await call('/chat/delete', { deleteChatDB: true })).toEqual({ status: 400, body: { error: 'number is required' } });
      expect(await call('/chat/delete', { number: 'abc', deleteChatDB: true })).toEqual({ status: 400, body: { error: 'Could not parse phone' } });
      expect(await call('/chat/delete', { number: contact, deleteChatDB: 'yes' })).toEqual({ status: 400, body: { error: 'deleteChatDB must be a boolean' } });
      expect((await call('/chat/delete', { number: contact })).status).toBe(400);
    });
  });

  it('should answer 400 for a number it cannot parse or a missing or wrong field', async () => {
    expect(await call('/chat/pin', { number: 'not a phone', pin: true })).toEqual({ status: 400, body: { error: 'Could not parse phone' } });
    expect(await call('/chat/archive', { number: '123', archive: true })).toEqual({ status: 400, body: { error: 'Could not parse phone' } });
    expect(await call('/chat/pin', { number: contact })).toEqual({ status: 400, body: { error: 'pin is required' } });
    expect(await call('/chat/pin', { pin: true })).toEqual({ status: 400, body: { error: 'number is required' } });
    expect(await call('/chat/read', { number: contact, read: 'yes' })).toEqual({ status: 400, body: { error: 'read must be a boolean' } });
    expect(await call('/chat/mute', { number: contact, muteEndTime: 5 })).toEqual({ status: 400, body: { error: 'muteEndTime must be one of 0, 8, 168, -1' } });
    expect(await call('/chat/mute', { number: contact })).toEqual({ status: 400, body: { error: 'muteEndTime is required' } });
  });

  it('should answer 502 when WhatsApp refuses the patch, and 409 No session for an instance that is not connected', async () => {
    await stack.control('POST', '/sim/faults', { kind: 'app-state', code: 500, device: phone });
    const refused = await call('/chat/pin', { number: contact, pin: true });
    expect(refused.status).toBe(502);
    expect(refused.body.error).toMatch(/WhatsApp refused the chat change \(500\)/);
    expect(await phoneChat()).toMatchObject({ pinned: false });

    const idle = await stack.gw.createInstance('chat-state-idle');
    expect(await call('/chat/pin', { number: contact, pin: true }, idle.token)).toEqual({ status: 409, body: { error: 'No session' } });
  });
});
