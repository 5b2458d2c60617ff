import { downloadMediaMessage } from '@whiskeysockets/baileys';
import { ContactRepository } from '@gw/persistence';
import { quietLibsignalConsole } from '@gw/wa-sim';
import { Agent } from 'undici';
import type { SessionWorker } from '../src/session-worker';
import { reviveMessage } from '../src/messaging/raw-message';
import { Harness, nextPhone, waitFor } from './support/harness';
import { encryptPollVote, MessagingFixture, type SimAccount } from './support/messaging-fixtures';

jest.setTimeout(30_000);
quietLibsignalConsole();

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

describe('Inbound messages of a 1:1 chat (real Baileys ↔ simulator)', () => {
  const harness = new Harness();
  const fixture = new MessagingFixture(harness);
  const instanceId = 'inbound-user';
  let worker: SessionWorker;
  let me: SimAccount;
  let ana: SimAccount;
  let firstId: string;

  beforeAll(async () => {
    await harness.start();
    worker = await harness.startWorker('w-inbound', { leaseTtlMs: 20_000 }); // no takeover here: a long lease keeps a loaded machine from fencing the worker
    me = await fixture.account(nextPhone(), 'Gateway Owner');
    ana = await fixture.account(nextPhone(), 'Ana Souza');
    await harness.newInstance(instanceId);
    await harness.pairByQr(instanceId, me.phone);
  });
  afterAll(() => harness.stop());

  it('should store a received text with both identities of the sender and announce it as the captures show', async () => {
    firstId = await fixture.send(ana.phone, me.phone, { text: 'Oi' });
    const row = await fixture.waitMessage(instanceId, firstId);
    expect(row).toMatchObject({
      id: expect.stringMatching(/^r[0-9a-f]{7}$/),
      chatId: ana.jid,
      chatLid: ana.lid,
      sender: ana.lid,
      senderPn: ana.jid,
      senderLid: ana.lid,
      senderName: 'Ana Souza',
      isGroup: false,
      fromMe: false,
      messageType: 'Conversation',
      type: 'text',
      mediaType: '',
      text: 'Oi',
      content: 'Oi',
      status: '',
      source: 'ios',
      wasSentByApi: false,
    });
    expect(row.messageTimestamp).toBeGreaterThan(Date.now() - 60_000);
    expect(row.messageTimestamp % 1000).toBe(0);
    expect(reviveMessage(row.raw!).key).toMatchObject({ id: firstId, remoteJid: ana.lid, remoteJidAlt: ana.jid });

    const event = await fixture.messageEvent(instanceId, firstId);
    expect(event.chatId).toBe(ana.jid);
    expect(Object.keys(event.payload).sort()).toEqual(['EventType', 'chat', 'chatSource', 'instanceName', 'message', 'owner']);
    expect(event.payload).toMatchObject({
      EventType: 'messages',
      chatSource: 'updated',
      instanceName: `name-${instanceId}`,
      owner: me.phone,
      chat: {
        wa_chatid: ana.jid,
        wa_chatlid: ana.lid,
        wa_fastid: `${me.phone}:${ana.phone}`,
        wa_isGroup: false,
        wa_name: 'Ana Souza',
        name: 'Ana Souza',
        wa_unreadCount: 1,
        wa_lastMessageTextVote: 'Oi',
        wa_lastMessageType: 'Conversation',
        wa_lastMessageSender: ana.lid,
        wa_lastMsgTimestamp: row.messageTimestamp,
      },
      message: {
        id: row.id,
        messageid: firstId,
        chatid: ana.jid,
        chatlid: ana.lid,
        sender: ana.lid,
        sender_pn: ana.jid,
        sender_lid: ana.lid,
        senderName: 'Ana Souza',
        groupName: 'Unknown',
        owner: me.phone,
        fromMe: false,
        isGroup: false,
        messageType: 'Conversation',
        text: 'Oi',
        wasSentByApi: false,
      },
    });
    expect(event.payload).not.toHaveProperty('token');
  });

  it('should remember the contact and its LID ↔ phone pair', async () => {
    const contacts = await fixture.query(`SELECT jid, lid, push_name FROM contacts WHERE instance_id = $1 AND jid = $2`, [instanceId, ana.jid]);
    expect(contacts).toEqual([{ jid: ana.jid, lid: ana.lid, push_name: 'Ana Souza' }]);
    const mappings = await fixture.query(`SELECT lid, pn FROM lid_mappings WHERE instance_id = $1 AND lid = $2`, [instanceId, ana.lid]);
    expect(mappings).toEqual([{ lid: ana.lid, pn: ana.jid }]);
    const contactEvents = await fixture.events(instanceId, 'contacts');
    expect(contactEvents.map((event) => event.payload.contacts).flat()).toContainEqual(
      expect.objectContaining({ jid: ana.jid, lid: ana.lid, phone: ana.phone, pushName: 'Ana Souza' }),
    );
  });

  it("should write a sender's push name once per received message, not again for the contacts.update Baileys emits with it", async () => {
    const observed = jest.spyOn(ContactRepository.prototype, 'observe');
    try {
      const anas = () => observed.mock.calls.filter(([, observation]) => observation.jid === ana.jid || observation.lid === ana.lid);
      const id = await fixture.send(ana.phone, me.phone, { text: 'De novo' });
      await fixture.waitMessage(instanceId, id);
      // Baileys' contacts.update ({ id, notify }) comes right after the message; give its write time to happen, if it did.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(anas().map(([, observation]) => observation.pushName)).toEqual(['Ana Souza']);

      // The same name announced again by itself (not the message's own update) is written; so is a new one.
      const socket = fixture.socket(worker, instanceId);
      const pushNameBecomes = (name: string) =>
        waitFor(
          () => fixture.query<{ push_name: string }>(`SELECT push_name FROM contacts WHERE instance_id = $1 AND jid = $2`, [instanceId, ana.jid]),
          (rows) => rows[0]?.push_name === name,
          5_000,
          `push name ${name}`,
        );
      socket.ev.emit('contacts.update', [{ id: ana.jid, notify: 'Ana Souza' }]);
      await waitFor(
        async () => anas().length,
        (n) => n === 2,
        5_000,
        'the repeated name written',
      );
      socket.ev.emit('contacts.update', [{ id: ana.jid, notify: 'Ana S.' }]);
      await pushNameBecomes('Ana S.');
      socket.ev.emit('contacts.update', [{ id: ana.jid, notify: 'Ana Souza' }]);
      await pushNameBecomes('Ana Souza');
    } finally {
      observed.mockRestore();
    }
  });

  it('should store an extended text that quotes an earlier message', async () => {
    const id = await fixture.send(ana.phone, me.phone, {
      message: {
        extendedTextMessage: { text: 'respondendo', contextInfo: { stanzaId: firstId, participant: ana.jid, quotedMessage: { conversation: 'Oi' } } },
      },
    });
    const row = await fixture.waitMessage(instanceId, id);
    expect(row).toMatchObject({ messageType: 'ExtendedTextMessage', type: 'text', text: 'respondendo', quoted: firstId });
    expect(row.content).toMatchObject({ text: 'respondendo', contextInfo: { stanzaID: firstId } });
  });

  it('should store an image whose raw message can be downloaded later', async () => {
    const id = await fixture.sendMedia(ana.phone, { to: me.phone, type: 'image', data: PNG.toString('base64'), mimetype: 'image/png', caption: 'olha' });
    const row = await fixture.waitMessage(instanceId, id);
    expect(row).toMatchObject({ messageType: 'ImageMessage', type: 'media', mediaType: 'image', text: 'olha' });
    expect(row.content).toMatchObject({ mimetype: 'image/png', caption: 'olha', URL: expect.any(String), mediaKey: expect.any(String) });
    const bytes = await downloadMediaMessage(reviveMessage(row.raw!), 'buffer', {
      options: { dispatcher: new Agent({ connect: { rejectUnauthorized: false } }) } as RequestInit,
    });
    expect(Buffer.compare(bytes as Buffer, PNG)).toBe(0);
  });

  it('should store a voice note, a document, a location and a contact card', async () => {
    const ptt = await fixture.sendMedia(ana.phone, {
      to: me.phone,
      type: 'audio',
      data: Buffer.from('OggS fake opus').toString('base64'),
      mimetype: 'audio/ogg; codecs=opus',
      ptt: true,
      seconds: 3,
    });
    const document = await fixture.sendMedia(ana.phone, {
      to: me.phone,
      type: 'document',
      data: Buffer.from('%PDF-1.4').toString('base64'),
      mimetype: 'application/pdf',
      fileName: 'contrato.pdf',
    });
    const location = await fixture.send(ana.phone, me.phone, {
      message: { locationMessage: { degreesLatitude: -23.55, degreesLongitude: -46.63, name: 'Escritório', address: 'Av. Paulista' } },
    });
    const vcard = 'BEGIN:VCARD\nVERSION:3.0\nFN:Bruno\nTEL;type=CELL;waid=5511999990000:+55 11 99999-0000\nEND:VCARD';
    const contact = await fixture.send(ana.phone, me.phone, { message: { contactMessage: { displayName: 'Bruno', vcard } } });

    expect(await fixture.waitMessage(instanceId, ptt)).toMatchObject({
      messageType: 'AudioMessage',
      type: 'media',
      mediaType: 'ptt',
      content: expect.objectContaining({ PTT: true, seconds: 3 }),
    });
    expect(await fixture.waitMessage(instanceId, document)).toMatchObject({
      messageType: 'DocumentMessage',
      mediaType: 'document',
      content: expect.objectContaining({ fileName: 'contrato.pdf' }),
    });
    expect(await fixture.waitMessage(instanceId, location)).toMatchObject({
      messageType: 'LocationMessage',
      mediaType: 'location',
      text: 'Escritório',
      content: expect.objectContaining({ degreesLatitude: -23.55, degreesLongitude: -46.63 }),
    });
    expect(await fixture.waitMessage(instanceId, contact)).toMatchObject({
      messageType: 'ContactMessage',
      mediaType: 'vcard',
      text: 'Bruno',
      content: { displayName: 'Bruno', vcard },
    });
  });

  it('should store a reaction as its own message pointing at the reacted one, without counting it unread', async () => {
    const before = (
      await fixture.query<{ unread_count: number }>(`SELECT unread_count FROM chats WHERE instance_id = $1 AND wa_chatid = $2`, [instanceId, ana.jid])
    )[0].unread_count;
    const id = await fixture.send(ana.phone, me.phone, {
      message: { reactionMessage: { key: { remoteJid: me.jid, fromMe: true, id: firstId }, text: '❤️', senderTimestampMs: Date.now() } },
    });
    const row = await fixture.waitMessage(instanceId, id);
    expect(row).toMatchObject({ messageType: 'ReactionMessage', type: 'reaction', reaction: firstId, text: '❤️' });
    const event = await fixture.messageEvent(instanceId, id);
    expect(event.payload.chat).toMatchObject({ wa_unreadCount: before, wa_lastMessageType: 'ReactionMessage', wa_lastMessageTextVote: '❤️' });
  });

  it('should apply an edit to the original and announce the edit', async () => {
    const original = await fixture.send(ana.phone, me.phone, { text: 'reunião às 10h' });
    await fixture.waitMessage(instanceId, original);
    const edit = await fixture.send(ana.phone, me.phone, {
      message: {
        protocolMessage: {
          key: { remoteJid: me.jid, fromMe: true, id: original },
          type: 14,
          editedMessage: { conversation: 'reunião às 11h' },
          timestampMs: Date.now(),
        },
      },
    });
    const editRow = await fixture.waitMessage(instanceId, edit);
    expect(editRow).toMatchObject({ messageType: 'Conversation', text: 'reunião às 11h', edited: original });
    expect(await fixture.message(instanceId, original)).toMatchObject({ text: 'reunião às 11h', content: 'reunião às 11h', edited: edit });
    expect((await fixture.messageEvent(instanceId, edit)).payload.message).toMatchObject({ messageid: edit, edited: original, text: 'reunião às 11h' });
  });

  it('should mark a revoked message Deleted and announce it', async () => {
    const original = await fixture.send(ana.phone, me.phone, { text: 'mensagem errada' });
    await fixture.waitMessage(instanceId, original);
    await fixture.send(ana.phone, me.phone, { message: { protocolMessage: { key: { remoteJid: me.jid, fromMe: true, id: original }, type: 0 } } });
    await fixture.waitMessage(instanceId, original, (row) => row.status === 'Deleted');
    const [event] = await waitFor(
      () => fixture.updateEvents(instanceId, original),
      (events) => events.length > 0,
      5_000,
      'Deleted event',
    );
    expect(event.payload).toMatchObject({
      EventType: 'messages_update',
      type: 'Deleted',
      state: 'Deleted',
      event: {
        MessageIDs: [original],
        Chat: ana.jid,
        Sender: ana.lid,
        sender_pn: ana.jid,
        sender_lid: ana.lid,
        IsFromMe: 'False',
        IsGroup: 'False',
        Type: 'Deleted',
      },
    });
  });

  it('should store a list reply with the chosen row id and title', async () => {
    const id = await fixture.send(ana.phone, me.phone, {
      message: {
        listResponseMessage: { title: 'Plano Pro', listType: 1, singleSelectReply: { selectedRowId: 'plan-pro' }, contextInfo: { stanzaId: 'LIST0001' } },
      },
    });
    expect(await fixture.waitMessage(instanceId, id)).toMatchObject({
      messageType: 'ListResponseMessage',
      mediaType: 'list_response',
      buttonOrListId: 'plan-pro',
      vote: 'Plano Pro',
      quoted: 'LIST0001',
    });
  });

  it('should decrypt a vote on a poll the instance created', async () => {
    const socket = fixture.socket(worker, instanceId);
    const poll = await socket.sendMessage(ana.jid, { poll: { name: 'Almoço?', values: ['Pizza', 'Sushi', 'Salada'], selectableCount: 1 } });
    const pollId = poll!.key.id!;
    expect(await fixture.waitMessage(instanceId, pollId)).toMatchObject({ fromMe: true, type: 'poll', text: 'Almoço?', chatId: ana.jid, chatLid: ana.lid });
    const secret = poll!.message!.messageContextInfo!.messageSecret!;

    // The voter's phone may key the vote with phone numbers or with LIDs: both must decrypt.
    const byPhone = encryptPollVote({ secret, pollId, creatorJid: me.jid, voterJid: ana.jid, selected: ['Sushi'] });
    const vote1 = await fixture.send(ana.phone, me.phone, {
      message: {
        pollUpdateMessage: { pollCreationMessageKey: { remoteJid: me.jid, fromMe: false, id: pollId }, vote: byPhone, senderTimestampMs: Date.now() },
      },
    });
    expect(await fixture.waitMessage(instanceId, vote1)).toMatchObject({ messageType: 'PollUpdateMessage', type: 'poll', vote: 'Sushi', quoted: pollId });

    const byLid = encryptPollVote({ secret, pollId, creatorJid: me.lid, voterJid: ana.lid, selected: ['Pizza'] });
    const vote2 = await fixture.send(ana.phone, me.phone, {
      message: { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: me.lid, fromMe: false, id: pollId }, vote: byLid, senderTimestampMs: Date.now() } },
    });
    expect(await fixture.waitMessage(instanceId, vote2)).toMatchObject({ vote: 'Pizza', quoted: pollId });
    expect((await fixture.messageEvent(instanceId, vote2)).payload.chat).toMatchObject({
      wa_lastMessageType: 'PollUpdateMessage',
      wa_lastMessageTextVote: 'Pizza',
    });
  });

  it('should store what the owner sent from the phone as fromMe, in the same chat', async () => {
    const id = await fixture.send(me.phone, ana.phone, { text: 'enviado do celular' });
    const row = await fixture.waitMessage(instanceId, id);
    expect(row).toMatchObject({
      fromMe: true,
      chatId: ana.jid,
      chatLid: ana.lid,
      sender: me.lid,
      senderPn: me.jid,
      senderLid: me.lid,
      status: 'Sent',
      text: 'enviado do celular',
    });
    const chats = await fixture.query(`SELECT wa_chatid, wa_chatlid FROM chats WHERE instance_id = $1 AND (wa_chatid = $2 OR wa_chatlid = $3)`, [
      instanceId,
      ana.jid,
      ana.lid,
    ]);
    expect(chats).toEqual([{ wa_chatid: ana.jid, wa_chatlid: ana.lid }]);
    const chatIds = new Set((await fixture.rows(instanceId)).map((message) => `${message.chatId}|${message.chatLid}`));
    expect([...chatIds]).toEqual([`${ana.jid}|${ana.lid}`]);
  });

  it('should follow the address-book name and the chat settings the phone syncs (app state)', async () => {
    await harness.control('POST', `/sim/accounts/${me.phone}/app-state`, { jid: ana.jid, mod: { contact: { fullName: 'Ana (cliente)', lidJid: ana.lid } } });
    await waitFor(
      () => fixture.query<{ contact_name: string }>(`SELECT contact_name FROM contacts WHERE instance_id = $1 AND jid = $2`, [instanceId, ana.jid]),
      (rows) => rows[0]?.contact_name === 'Ana (cliente)',
      8_000,
      'address-book name',
    );
    const contactEvents = (await fixture.events(instanceId, 'contacts')).map((event) => event.payload.contacts).flat();
    expect(contactEvents).toContainEqual({
      jid: ana.jid,
      lid: ana.lid,
      phone: ana.phone,
      contactName: 'Ana (cliente)',
      pushName: 'Ana Souza',
      verifiedName: '',
    });

    await harness.control('POST', `/sim/accounts/${me.phone}/app-state`, { jid: ana.jid, mod: { pin: true } });
    const chats = await waitFor(
      () => fixture.events(instanceId, 'chats'),
      (events) => events.some((event) => event.payload.chats[0]?.wa_isPinned === true),
      8_000,
      'chats event for the pin',
    );
    const pinned = chats.find((event) => event.payload.chats[0]?.wa_isPinned === true)!;
    expect(pinned.chatId).toBe(ana.jid);
    expect(pinned.payload).toMatchObject({
      EventType: 'chats',
      owner: me.phone,
      chats: [
        expect.objectContaining({
          wa_chatid: ana.jid,
          wa_chatlid: ana.lid,
          wa_isPinned: true,
          wa_contactName: 'Ana (cliente)',
          name: 'Ana (cliente)',
          wa_name: 'Ana Souza',
        }),
      ],
    });
  });

  it('should not store, count or announce the same message twice, even when Baileys emits it again', async () => {
    const unread = async () =>
      (await fixture.query<{ unread_count: number }>(`SELECT unread_count FROM chats WHERE instance_id = $1 AND wa_chatid = $2`, [instanceId, ana.jid]))[0]
        .unread_count;
    const id = await fixture.send(ana.phone, me.phone, { text: 'once' });
    const stored = await fixture.waitMessage(instanceId, id);
    const before = await unread();
    fixture.socket(worker, instanceId).ev.emit('messages.upsert', { messages: [reviveMessage(stored.raw!)], type: 'notify' });
    // Handled in arrival order: once a later message is stored, the repeat has been handled.
    await fixture.waitMessage(instanceId, await fixture.send(ana.phone, me.phone, { text: 'after' }));
    expect(await unread()).toBe(before + 1);

    const messages = await fixture.events(instanceId, 'messages');
    const ids = messages.map((event) => event.payload.message.messageid as string);
    expect(ids.filter((each) => each === id)).toHaveLength(1);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
