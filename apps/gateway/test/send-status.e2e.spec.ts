import { startFilesServer, type FilesServer } from './support/files-server';
import { nextPhone, Stack } from './support/stack';

/**
 * `POST /send/status`: stories to status@broadcast. The audience is the instance's saved contacts (or
 * the explicit recipients that pass the checks); the recipients' simulated phones decode the status.
 */
describe('POST /send/status (HTTP → worker → Baileys → status@broadcast → simulated phones)', () => {
  const stack = new Stack();
  let token: string;
  let instanceId: string;
  let ownPhone: string;
  let friend: { phone: string; lid: string };
  let colleague: { phone: string; lid: string };
  let stranger: string;
  let ghost: string;
  let files: FilesServer;

  const inboxStatus = async (phone: string, messageId: string) =>
    (await stack.received(phone, messageId, 15_000)) as unknown as { to: string; participant?: string; message: Record<string, any> };
  const reached = async (phone: string, messageId: string) => (await stack.inbox(phone, 0)).some((entry) => entry.id === messageId);
  const account = async (phone: string, name: string) => {
    const created = await stack.control<{ lid: string }>('POST', '/sim/accounts', { phone, name });
    return { phone, lid: created.lid };
  };
  const saveContact = (jid: string, fields: { lid?: string; contactName?: string; pushName?: string; inAddressBook?: boolean }) =>
    stack.db.dataSource.query(
      `INSERT INTO contacts (instance_id, jid, lid, contact_name, push_name, in_address_book) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (instance_id, jid) DO UPDATE SET lid = EXCLUDED.lid, contact_name = EXCLUDED.contact_name, push_name = EXCLUDED.push_name, in_address_book = EXCLUDED.in_address_book`,
      [instanceId, jid, fields.lid ?? '', fields.contactName ?? '', fields.pushName ?? '', fields.inAddressBook ?? false],
    );

  beforeAll(async () => {
    await stack.start();
    ({ id: instanceId, token, phone: ownPhone } = await stack.connectedInstance('stories'));
    friend = await account(nextPhone('5581'), 'Ana');
    colleague = await account(nextPhone('5582'), 'Bia');
    stranger = (await account(nextPhone('5583'), 'Caio')).phone;
    ghost = nextPhone('5584'); // saved in the address book, but no WhatsApp account
    await saveContact(`${friend.phone}@s.whatsapp.net`, { lid: friend.lid, contactName: 'Ana', inAddressBook: true });
    await saveContact(`${colleague.phone}@s.whatsapp.net`, { contactName: 'Bia', inAddressBook: true });
    await saveContact(`${ghost}@s.whatsapp.net`, { contactName: 'Fantasma', inAddressBook: true });
    await saveContact(`${stranger}@s.whatsapp.net`, { pushName: 'Caio' });
    await stack.db.dataSource.query(`INSERT INTO lid_mappings (instance_id, lid, pn) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
      instanceId,
      friend.lid,
      `${friend.phone}@s.whatsapp.net`,
    ]);
    files = await startFilesServer();
  }, 90_000);

  afterAll(async () => {
    await files?.close();
    await stack.stop();
  });

  it('should send a text status to the saved contacts on WhatsApp, with its colour and font, and store it', async () => {
    const { status, body } = await stack.gw.call('POST', '/send/status', {
      token,
      body: { type: 'text', text: 'Novidades chegando!', background_color: 7, font: 1, track_id: 'story-1' },
    });
    expect(status).toBe(200);
    expect(body.Id).toBe(body.messageid);
    expect(body).toMatchObject({ chatid: 'status@broadcast', fromMe: true, sendFunction: 'SendStatus', track_id: 'story-1', response: { status: 'success' } });
    expect(body.debug).toMatchObject({
      status_privacy_type: 'contacts',
      used_default_privacy_fallback: false,
      explicit_recipients: false,
      audience_recipient_count: 3,
      total_contacts_in_store: 4,
      contacts_with_full_name: 3,
      contacts_with_push_name_only: 1,
      selected_recipient_count: 2,
      partial_send: false,
      discarded_recipients: [{ input: `${ghost}@s.whatsapp.net`, reason: 'not_on_whatsapp' }],
    });
    for (const phone of [friend.phone, colleague.phone]) {
      const entry = await inboxStatus(phone, body.messageid);
      expect(entry.to).toBe('status@broadcast');
      expect(entry.message.extendedTextMessage).toMatchObject({ text: 'Novidades chegando!', font: 'SYSTEM_TEXT', backgroundArgb: 0xff26c6da });
    }
    expect(await reached(stranger, body.messageid)).toBe(false);
    const found = await stack.gw.call('POST', '/message/find', { token, body: { id: body.messageid } });
    expect(found.body.messages[0]).toMatchObject({ chatid: 'status@broadcast', text: 'Novidades chegando!', sendFunction: 'SendStatus' });
  });

  it('should keep only valid explicit recipients, say why each other was left out, and cap them with max_recipients', async () => {
    const recipients = [friend.lid, colleague.phone, `${colleague.phone}@s.whatsapp.net`, 'not-a-number', '999999999999999@lid', stranger];
    const { status, body } = await stack.gw.call('POST', '/send/status', {
      token,
      body: { type: 'text', text: 'Só para alguns', recipients, max_recipients: 1 },
    });
    expect(status).toBe(200);
    expect(body.debug).toMatchObject({
      explicit_recipients: true,
      requested_recipient_count: 6,
      resolved_recipient_count: 2,
      discarded_recipient_count: 4,
      max_recipients: 1,
      selected_recipient_count: 1,
      partial_send: true,
    });
    expect(body.debug.discarded_recipients).toEqual([
      { input: `${colleague.phone}@s.whatsapp.net`, reason: 'duplicate' },
      { input: 'not-a-number', reason: 'invalid_format' },
      { input: '999999999999999@lid', reason: 'lid_unresolved' },
      { input: stranger, reason: 'outside_status_audience' },
    ]);
    const entry = await inboxStatus(friend.phone, body.messageid);
    expect(entry.message.extendedTextMessage.text).toBe('Só para alguns');
    // The default background (19, deep grey) when none is given.
    expect(entry.message.extendedTextMessage.backgroundArgb).toBe(0xff424242);
    expect(await reached(colleague.phone, body.messageid)).toBe(false);
  });

  it("should follow the phone's status audience: saved contacts but the excluded ones (blacklist), or only the listed ones (whitelist)", async () => {
    const audience = (type: string, list: string[]) => stack.control('POST', `/sim/accounts/${ownPhone}/status-privacy`, { type, list });
    try {
      // "My contacts except…": Ana excluded (listed by her LID, as the phone may list her).
      await audience('blacklist', [friend.lid]);
      const except = await stack.gw.call('POST', '/send/status', { token, body: { type: 'text', text: 'Menos a Ana' } });
      expect(except.status).toBe(200);
      expect(except.body.debug).toMatchObject({
        status_privacy_type: 'blacklist',
        status_privacy_list_count: 1,
        used_default_privacy_fallback: false,
        audience_recipient_count: 2,
        selected_recipient_count: 1,
      });
      expect((await inboxStatus(colleague.phone, except.body.messageid)).message.extendedTextMessage.text).toBe('Menos a Ana');
      expect(await reached(friend.phone, except.body.messageid)).toBe(false);
      // An explicit recipient outside that audience is left out, with the reason.
      const outside = await stack.gw.call('POST', '/send/status', { token, body: { type: 'text', text: 'x', recipients: [friend.phone, colleague.phone] } });
      expect(outside.status).toBe(200);
      expect(outside.body.debug.discarded_recipients).toEqual([{ input: friend.phone, reason: 'outside_status_audience' }]);

      // "Only share with…": Caio (not even a saved contact) and Ana; Bia is not on the list.
      await audience('whitelist', [`${stranger}@s.whatsapp.net`, `${friend.lid.replace('@', ':3@')}`, '888888888888888@lid']);
      const only = await stack.gw.call('POST', '/send/status', { token, body: { type: 'text', text: 'Só para a lista' } });
      expect(only.status).toBe(200);
      expect(only.body.debug).toMatchObject({
        status_privacy_type: 'whitelist',
        status_privacy_list_count: 3,
        status_privacy_list_unresolved: 1,
        audience_recipient_count: 2,
        selected_recipient_count: 2,
      });
      for (const phone of [stranger, friend.phone])
        expect((await inboxStatus(phone, only.body.messageid)).message.extendedTextMessage.text).toBe('Só para a lista');
      expect(await reached(colleague.phone, only.body.messageid)).toBe(false);
    } finally {
      await audience('contacts', []);
    }
  });

  it('should send an image status with its caption, and a voice status', async () => {
    const image = await stack.gw.call('POST', '/send/status', {
      token,
      body: { type: 'image', file: `${files.url}/promo.png`, text: 'Promoção', recipients: [friend.phone] },
    });
    expect(image.status).toBe(200);
    expect((await inboxStatus(friend.phone, image.body.messageid)).message.imageMessage).toMatchObject({ caption: 'Promoção', mimetype: 'image/png' });

    const ogg = Buffer.from('4f67675300020000000000000000', 'hex');
    const voice = await stack.gw.call('POST', '/send/status', {
      token,
      body: { type: 'ptt', file: ogg.toString('base64'), mimetype: 'audio/ogg', background_color: 4, recipients: [colleague.phone] },
    });
    expect(voice.status).toBe(200);
    expect((await inboxStatus(colleague.phone, voice.body.messageid)).message.audioMessage).toMatchObject({ ptt: true });
  });

  it('should answer 400 with the reason for bad input', async () => {
    const bad = async (body: Record<string, unknown>) => stack.gw.call('POST', '/send/status', { token, body });
    expect(await bad({ text: 'x' })).toEqual({ status: 400, body: { error: 'type must be one of text, image, video, audio, myaudio, ptt' } });
    expect(await bad({ type: 'sticker', file: 'x' })).toMatchObject({ status: 400 });
    expect(await bad({ type: 'text' })).toEqual({ status: 400, body: { error: 'text is required for type=text' } });
    expect(await bad({ type: 'text', text: 'x'.repeat(657) })).toEqual({ status: 400, body: { error: 'text is longer than 656 characters' } });
    expect(await bad({ type: 'text', text: 'x', font: 3 })).toEqual({ status: 400, body: { error: 'Invalid font' } });
    expect(await bad({ type: 'text', text: 'x', font: 'bold' })).toEqual({ status: 400, body: { error: 'Invalid font' } });
    expect((await bad({ type: 'text', text: 'x', background_color: 20 })).body.error).toMatch(/^Invalid background_color/);
    expect((await bad({ type: 'image' })).body.error).toMatch(/^file is required/);
    expect(await bad({ type: 'text', text: 'x', recipients: 'all' })).toEqual({ status: 400, body: { error: 'recipients must be an array of strings' } });
    expect(await bad({ type: 'text', text: 'x', max_recipients: -1 })).toEqual({
      status: 400,
      body: { error: 'max_recipients must be a non-negative integer' },
    });
    expect((await bad({ type: 'image', file: 'http://10.1.2.3/x.png', recipients: [friend.phone] })).body.error).toMatch(/refused/);

    const none = await bad({ type: 'text', text: 'x', recipients: ['abc', stranger] });
    expect(none.status).toBe(400);
    expect(none.body.error).toBe('no valid recipients left for the status');
    expect(none.body.debug.discarded_recipients).toEqual([
      { input: 'abc', reason: 'invalid_format' },
      { input: stranger, reason: 'outside_status_audience' },
    ]);

    const onlyGhost = await bad({ type: 'text', text: 'x', recipients: [ghost] });
    expect(onlyGhost.status).toBe(400);
    expect(onlyGhost.body.debug.discarded_recipients).toEqual([{ input: ghost, reason: 'not_on_whatsapp' }]);
  });
});
