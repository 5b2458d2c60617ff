import { nextPhone, Stack, waitFor } from './support/stack';

interface PhoneNote {
  noteId: string;
  chatJid: string;
  text: string;
  deleted: boolean;
}

/**
 * `/chat/ephemeral`, `/chat/notes*` and what `/chat/editLead`, `/chat/read` and `/chat/details` leave in
 * the chat, through HTTP with real Baileys against the simulator: the contact's phone receives the
 * disappearing-messages protocol message, the phone's app state keeps the notes (and writes its own).
 */
describe('chat settings and notes (HTTP → worker → Baileys → the phones)', () => {
  const stack = new Stack();
  let token: string;
  let phone: string;
  let contact: string;
  let chatJid: string;

  const call = (path: string, body: unknown) => stack.gw.call('POST', path, { token, body });
  const storedChat = async (jid = chatJid) => (await call('/chat/find', { wa_chatid: jid })).body.chats[0] as Record<string, unknown>;
  const chatsEvents = async () =>
    (await stack.db.dataSource.query(`SELECT payload FROM outbox_events WHERE event_type = 'chats' ORDER BY id`)).map(
      (row: { payload: { chats: Array<Record<string, unknown>> } }) => row.payload,
    ) as Array<{ chats: Array<Record<string, unknown>> }>;
  const phoneNotes = async () => (await stack.control<{ notes: PhoneNote[] }>('GET', `/sim/accounts/${phone}/notes`)).notes;

  beforeAll(async () => {
    await stack.start();
    ({ token, phone } = await stack.connectedInstance('chat-notes'));
    contact = nextPhone('5586');
    chatJid = `${contact}@s.whatsapp.net`;
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Caio' });
    await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, text: 'bom dia' });
    await waitFor(
      () => storedChat(),
      (chat) => chat?.wa_unreadCount === 1,
      20_000,
      'the contact’s chat',
    );
  }, 90_000);
  afterAll(() => stack.stop());

  describe('POST /chat/ephemeral', () => {
    it('should turn disappearing messages on: the contact receives the protocol message, the chat keeps the timer with a chats event', async () => {
      const before = (await chatsEvents()).length;
      const { status, body } = await call('/chat/ephemeral', { number: chatJid, duration: '7d' });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        response: 'Ephemeral timer updated successfully',
        chat: { wa_chatid: chatJid, wa_ephemeralExpiration: 604800, wa_isGroup: false },
        ephemeral: { enabled: true, seconds: 604800, label: '7d' },
      });
      // WhatsApp wraps it in an ephemeralMessage, as Baileys sends it.
      const protocolOf = (message: Record<string, any>) => message?.ephemeralMessage?.message?.protocolMessage ?? message?.protocolMessage;
      const inbox = await waitFor(
        () => stack.inbox(contact, 1_000),
        (entries) => entries.some((entry) => protocolOf(entry.message)?.ephemeralExpiration === 604800),
        10_000,
        'the EPHEMERAL_SETTING at the contact',
      );
      const setting = inbox.find((entry) => protocolOf(entry.message)?.ephemeralExpiration === 604800)!;
      expect(protocolOf(setting.message).type).toBe('EPHEMERAL_SETTING');
      expect(await storedChat()).toMatchObject({ wa_ephemeralExpiration: 604800 });
      const events = (await chatsEvents()).slice(before);
      expect(events.some((event) => event.chats.some((chat) => chat.wa_chatid === chatJid && chat.wa_ephemeralExpiration === 604800))).toBe(true);
    });

    it('should turn them off with 0 or off, and take the timer in seconds', async () => {
      expect((await call('/chat/ephemeral', { number: contact, duration: 'off' })).body).toMatchObject({
        chat: { wa_ephemeralExpiration: 0 },
        ephemeral: { enabled: false, seconds: 0, label: 'off' },
      });
      expect((await call('/chat/ephemeral', { number: contact, duration: 7776000 })).body.ephemeral).toEqual({ enabled: true, seconds: 7776000, label: '90d' });
      expect((await call('/chat/ephemeral', { number: contact, duration: 0 })).body.ephemeral).toEqual({ enabled: false, seconds: 0, label: 'off' });
      expect(await storedChat()).toMatchObject({ wa_ephemeralExpiration: 0 });
    });

    it('should store the timer the contact sets from the phone', async () => {
      await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, message: { protocolMessage: { type: 3, ephemeralExpiration: 86400 } } });
      await waitFor(
        () => storedChat(),
        (chat) => chat.wa_ephemeralExpiration === 86400,
        10_000,
        'the contact’s timer',
      );
    });

    it('should send every message into the chat with its timer, as WhatsApp’s apps do, and none once it is off', async () => {
      const expirationAtContact = async (text: string) => {
        const { body } = await call('/send/text', { number: contact, text });
        const entry = await stack.received(contact, body.messageid);
        const inner = entry.message.ephemeralMessage?.message ?? entry.message;
        return inner.extendedTextMessage?.contextInfo?.expiration ?? 0;
      };
      // The contact's 1 day, set from the phone in the test before.
      expect(await expirationAtContact('vale por um dia')).toBe(86400);
      await call('/chat/ephemeral', { number: contact, duration: '90d' });
      expect(await expirationAtContact('vale por 90 dias')).toBe(7776000);
      await call('/chat/ephemeral', { number: contact, duration: 'off' });
      expect(await expirationAtContact('fica')).toBe(0);
    });

    it('should refuse a group, an unknown duration and a missing one', async () => {
      expect(await call('/chat/ephemeral', { number: '120363000000000001@g.us', duration: '1d' })).toEqual({
        status: 400,
        body: { error: 'disappearing messages of a group are set with /group/ephemeral' },
      });
      expect(await call('/chat/ephemeral', { number: contact, duration: '2d' })).toEqual({
        status: 400,
        body: { error: 'invalid duration. Allowed values: 0, off, 1d, 7d, 90d' },
      });
      expect(await call('/chat/ephemeral', { number: contact, duration: { days: 1 } })).toMatchObject({ status: 400 });
      expect(await call('/chat/ephemeral', { number: contact })).toEqual({ status: 400, body: { error: 'duration is required' } });
      expect(await call('/chat/ephemeral', { number: 'nope', duration: '1d' })).toEqual({ status: 400, body: { error: 'Could not parse phone' } });
    });
  });

  describe('POST /chat/notes, /chat/notes/edit, /chat/notes/refresh', () => {
    const note = 'Cliente prefere contato no período da tarde';

    it('should answer the stored note, none yet', async () => {
      expect(await call('/chat/notes', { number: chatJid })).toEqual({
        status: 200,
        body: { chat: expect.objectContaining({ wa_chatid: chatJid, wa_notes: '' }), wa_notes: '', source: 'local' },
      });
    });

    it('should write the note to the phone’s app state and store it, with a chats event', async () => {
      const before = (await chatsEvents()).length;
      const { status, body } = await call('/chat/notes/edit', { number: contact, notes: note });
      expect(status).toBe(200);
      expect(body).toEqual({
        response: 'Chat notes updated',
        chat: expect.objectContaining({ wa_chatid: chatJid, wa_notes: note }),
        wa_notes: note,
        source: 'api',
      });
      expect(await phoneNotes()).toEqual([expect.objectContaining({ chatJid, text: note, deleted: false })]);
      expect(await call('/chat/notes', { number: contact })).toMatchObject({ status: 200, body: { wa_notes: note, source: 'local' } });
      const events = (await chatsEvents()).slice(before);
      expect(events.some((event) => event.chats.some((chat) => chat.wa_notes === note))).toBe(true);
      expect(await storedChat()).toMatchObject({ wa_notes: note });
    });

    it('should read a note the phone changed on refresh (force too), and edit that same note afterwards', async () => {
      const [written] = await phoneNotes();
      await stack.control('POST', `/sim/accounts/${phone}/notes`, { chatJid, text: 'Ligar amanhã às 10h' });
      // (The worker follows the phone's change by itself too; the refresh reads WhatsApp whatever is stored.)
      expect(await call('/chat/notes/refresh', { number: contact })).toEqual({
        status: 200,
        body: { chat: expect.objectContaining({ wa_notes: 'Ligar amanhã às 10h' }), wa_notes: 'Ligar amanhã às 10h', source: 'appstate_reload' },
      });
      await stack.control('POST', `/sim/accounts/${phone}/notes`, { chatJid, text: 'Ligar às 11h' });
      expect((await call('/chat/notes/refresh', { number: chatJid, force: true })).body).toMatchObject({ wa_notes: 'Ligar às 11h', source: 'appstate_reload' });

      await call('/chat/notes/edit', { number: contact, notes: 'Ligar às 12h' });
      const notes = await phoneNotes();
      expect(notes).toEqual([{ ...written, text: 'Ligar às 12h', deleted: false, createdAt: expect.any(Number) }]);
    });

    it('should clear the note with an empty string', async () => {
      expect((await call('/chat/notes/edit', { number: contact, notes: '' })).body).toMatchObject({ wa_notes: '', chat: { wa_notes: '' } });
      expect(await phoneNotes()).toEqual([expect.objectContaining({ chatJid, text: '', deleted: true })]);
      expect((await call('/chat/notes/refresh', { number: contact })).body.wa_notes).toBe('');
    });

    it('should follow a note the phone writes without a refresh, with a chats event', async () => {
      const before = (await chatsEvents()).length;
      await stack.control('POST', `/sim/accounts/${phone}/notes`, { chatJid, text: 'Visita na sexta' });
      await waitFor(
        () => call('/chat/notes', { number: contact }),
        (reply) => reply.body.wa_notes === 'Visita na sexta',
        10_000,
        'the phone’s note',
      );
      const events = (await chatsEvents()).slice(before);
      expect(events.some((event) => event.chats.some((chat) => chat.wa_chatid === chatJid && chat.wa_notes === 'Visita na sexta'))).toBe(true);
      await call('/chat/notes/edit', { number: contact, notes: '' });
    });

    it('should answer 404 for a chat the instance does not have, 400 for bad input', async () => {
      const stranger = nextPhone('5587');
      for (const path of ['/chat/notes', '/chat/notes/refresh'])
        expect(await call(path, { number: stranger })).toEqual({ status: 404, body: { error: 'chat not found' } });
      expect(await call('/chat/notes/edit', { number: stranger, notes: 'x' })).toEqual({ status: 404, body: { error: 'chat not found' } });
      expect(await phoneNotes()).toHaveLength(1);
      expect(await call('/chat/notes', {})).toEqual({ status: 400, body: { error: 'number is required' } });
      expect(await call('/chat/notes/edit', { number: contact })).toEqual({ status: 400, body: { error: 'notes is required' } });
      expect(await call('/chat/notes/edit', { number: contact, notes: 5 })).toEqual({ status: 400, body: { error: 'notes must be a string' } });
      expect((await call('/chat/notes/edit', { number: contact, notes: 'x'.repeat(5000) })).status).toBe(400);
      expect((await call('/chat/notes/refresh', { number: contact, force: 'yes' })).status).toBe(400);
      expect((await call('/chat/notes', { number: '120363000000000001@g.us' })).status).toBe(400);
    });
  });

  describe('chat leftovers', () => {
    it('should send a chats event when /chat/editLead writes lead fields', async () => {
      const before = (await chatsEvents()).length;
      const { status } = await call('/chat/editLead', { id: chatJid, lead_name: 'Caio Lead', lead_status: 'novo' });
      expect(status).toBe(200);
      const events = (await chatsEvents()).slice(before);
      expect(events).toEqual([
        expect.objectContaining({ chats: [expect.objectContaining({ wa_chatid: chatJid, lead_name: 'Caio Lead', lead_status: 'novo' })] }),
      ]);
    });

    it('should show a chat marked unread as one unread, and read again as none', async () => {
      expect((await call('/chat/read', { number: contact, read: true })).status).toBe(200);
      expect(await storedChat()).toMatchObject({ wa_unreadCount: 0 });
      const before = (await chatsEvents()).length;
      expect((await call('/chat/read', { number: contact, read: false })).status).toBe(200);
      expect(await storedChat()).toMatchObject({ wa_unreadCount: 1 });
      expect((await call('/chat/find', { wa_chatid: chatJid })).body.totalChatsStats.unread_chats).toBeGreaterThanOrEqual(1);
      const events = (await chatsEvents()).slice(before);
      expect(events.some((event) => event.chats.some((chat) => chat.wa_chatid === chatJid && chat.wa_unreadCount === 1))).toBe(true);
      await call('/chat/read', { number: contact, read: true });
      expect(await storedChat()).toMatchObject({ wa_unreadCount: 0 });
    });

    it('should count a message arriving in a chat marked unread as its one unread (WhatsApp shows 1, not 2), the next as 2', async () => {
      expect((await call('/chat/read', { number: contact, read: false })).status).toBe(200);
      expect(await storedChat()).toMatchObject({ wa_unreadCount: 1 });
      await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, text: 'ainda aí?' });
      const first = await waitFor(storedChat, (chat) => chat.wa_lastMessageTextVote === 'ainda aí?' || chat.wa_unreadCount !== 1, 20_000, 'the new message');
      expect(first).toMatchObject({ wa_unreadCount: 1 });
      await stack.control('POST', `/sim/accounts/${contact}/send`, { to: phone, text: 'alô' });
      await waitFor(storedChat, (chat) => chat.wa_unreadCount === 2, 20_000, 'the second message counted');
      await call('/chat/read', { number: contact, read: true });
      expect(await storedChat()).toMatchObject({ wa_unreadCount: 0 });
    });

    it('should list the groups in common in /chat/details', async () => {
      const first = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: contact, subject: 'Turma', participants: [phone] });
      const second = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: phone, subject: 'Família', participants: [contact] });
      const other = nextPhone('5588');
      await stack.control('POST', '/sim/accounts', { phone: other, name: 'Outro' });
      await stack.control('POST', '/sim/groups', { creator: other, subject: 'Sem Caio', participants: [phone] });
      const details = await call('/chat/details', { number: contact });
      expect(details.status).toBe(200);
      expect(details.body.common_groups.split(',').sort()).toEqual([`Família(${second.jid})`, `Turma(${first.jid})`].sort());
    });
  });
});
