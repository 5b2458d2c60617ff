import { nextPhone, Stack, waitFor } from './support/stack';

type BookEntry = { jid: string; fullName: string; firstName: string };

/** `/contacts`, `/contacts/list`, `/contact/add`, `/contact/remove` and `/chat/check` through HTTP, real Baileys against the simulator. */
describe('contact API (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let instanceId: string;
  let token: string;
  let owner: string;
  let friend: string;
  let friendLid: string;
  let stranger: string;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const book = async () => (await stack.control<{ contacts: BookEntry[] }>('GET', `/sim/accounts/${owner}/address-book`)).contacts;
  const contactEvents = () =>
    stack.db.dataSource.query(`SELECT payload FROM outbox_events WHERE instance_id = $1 AND event_type = 'contacts' ORDER BY id`, [instanceId]) as Promise<
      Array<{ payload: { contacts: Array<{ jid: string; contactName: string }> } }>
    >;

  beforeAll(async () => {
    await stack.start();
    ({ id: instanceId, token, phone: owner } = await stack.connectedInstance('contacts-api'));
    friend = nextPhone('5585');
    stranger = nextPhone('5586');
    friendLid = (await stack.control<{ lid: string }>('POST', '/sim/accounts', { phone: friend, name: 'Friend' })).lid;
    await stack.control('POST', '/sim/accounts', { phone: stranger, name: 'Stranger' });
  }, 60_000);
  afterAll(() => stack.stop());

  it('should list a contact the phone saved (app state) under address_book, and one only seen outside it', async () => {
    await stack.control('POST', `/sim/accounts/${owner}/app-state`, {
      jid: `${stranger}@s.whatsapp.net`,
      mod: { contact: { fullName: 'Zé Estranho', firstName: 'Zé' } },
    });
    await stack.db.dataSource.query(`INSERT INTO contacts (instance_id, jid, push_name) VALUES ($1, $2, 'Only pushed') ON CONFLICT DO NOTHING`, [
      instanceId,
      '5599911112222@s.whatsapp.net',
    ]);
    const listed = await waitFor(
      async () => (await call('GET', '/contacts')).body as Array<{ jid: string; contact_name: string; contact_FirstName: string }>,
      (contacts) => contacts.some((contact) => contact.jid === `${stranger}@s.whatsapp.net`),
      15_000,
      'the saved contact listed',
    );
    expect(listed).toContainEqual({ jid: `${stranger}@s.whatsapp.net`, contact_name: 'Zé Estranho', contact_FirstName: 'Zé' });
    expect(listed.map((contact) => contact.jid)).not.toContain('5599911112222@s.whatsapp.net');
    const outside = (await call('GET', '/contacts?contactScope=outside_address_book')).body as Array<{ jid: string }>;
    expect(outside.map((contact) => contact.jid)).toContain('5599911112222@s.whatsapp.net');
    expect(outside.map((contact) => contact.jid)).not.toContain(`${stranger}@s.whatsapp.net`);
    const all = (await call('GET', '/contacts?contactScope=all')).body as Array<{ jid: string }>;
    expect(all.length).toBe(listed.length + outside.length);
    expect(await call('GET', '/contacts?contactScope=nope')).toEqual({
      status: 400,
      body: { error: 'contactScope must be one of address_book, outside_address_book, all' },
    });
  });

  it('should page the contacts with limit/offset and count them (POST /contacts/list)', async () => {
    const { status, body } = await call('POST', '/contacts/list', { contactScope: 'all', limit: 1, offset: 1 });
    expect(status).toBe(200);
    expect(body.contacts).toHaveLength(1);
    expect(body.pagination).toEqual({ totalRecords: body.totalDeviceContacts, limit: 1, offset: 1 });
    const saved = await call('POST', '/contacts/list', {});
    expect(saved.body.pagination).toMatchObject({ limit: 100, offset: 0 });
    expect(saved.body.pagination.totalRecords).toBe(saved.body.contacts.length);
    expect(await call('POST', '/contacts/list', { limit: 1001 })).toEqual({ status: 400, body: { error: 'limit must be an integer between 1 and 1000' } });
    expect((await call('POST', '/contacts/list', { contactScope: 'x' })).status).toBe(400);
  });

  it('should page the contacts with the older page/pageSize too, the same rows as limit/offset', async () => {
    const all = (await call('POST', '/contacts/list', { contactScope: 'all' })).body;
    expect(all.contacts.length).toBeGreaterThanOrEqual(2);
    const { status, body } = await call('POST', '/contacts/list', { contactScope: 'all', page: 2, pageSize: 1 });
    expect(status).toBe(200);
    expect(body.contacts).toEqual([all.contacts[1]]);
    const total = all.pagination.totalRecords;
    expect(body.pagination).toEqual({ totalRecords: total, limit: 1, offset: 1, page: 2, pageSize: 1, lastPage: total });
    expect((await call('POST', '/contacts/list', { contactScope: 'all', page: '1', pageSize: '1' })).body.contacts).toEqual([all.contacts[0]]);
    expect(await call('POST', '/contacts/list', { page: 0 })).toEqual({ status: 400, body: { error: 'page must be an integer of 1 or more' } });
    expect(await call('POST', '/contacts/list', { pageSize: 1001 })).toEqual({
      status: 400,
      body: { error: 'pageSize must be an integer between 1 and 1000' },
    });
  });

  it('should save a contact in the phone address book through app state, and the contacts event follows (POST /contact/add)', async () => {
    const { status, body } = await call('POST', '/contact/add', {
      number: `+${friend.slice(0, 2)} (${friend.slice(2, 4)}) ${friend.slice(4, 9)}-${friend.slice(9)}`,
      name: 'Ana Amiga',
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      success: true,
      message: 'Contact added successfully',
      contact: { jid: `${friend}@s.whatsapp.net`, name: 'Ana Amiga', phone: friend },
    });
    // The contactAction names the number's LID too, which WhatsApp Web reads to show the name in LID-addressed chats (docs/protocol.md).
    expect(await book()).toContainEqual({ jid: `${friend}@s.whatsapp.net`, fullName: 'Ana Amiga', firstName: 'Ana Amiga', lidJid: friendLid });
    const events = await contactEvents();
    expect(
      events.some((event) => event.payload.contacts.some((contact) => contact.jid === `${friend}@s.whatsapp.net` && contact.contactName === 'Ana Amiga')),
    ).toBe(true);
    const listed = (await call('GET', '/contacts')).body as Array<{ jid: string; contact_name: string }>;
    expect(listed).toContainEqual(expect.objectContaining({ jid: `${friend}@s.whatsapp.net`, contact_name: 'Ana Amiga' }));
    expect(await call('POST', '/contact/add', { number: friend })).toEqual({ status: 400, body: { error: 'name is required' } });
    expect(await call('POST', '/contact/add', { number: `${friendLid}`, name: 'x' })).toEqual({ status: 400, body: { error: 'Invalid number' } });
  });

  it('should remove a contact from the phone address book in every accepted form, and refuse LIDs, groups and unknown contacts (POST /contact/remove)', async () => {
    for (const number of [`+${friend}`, friend, `${friend}@s.whatsapp.net`]) {
      await call('POST', '/contact/add', { number: friend, name: 'Ana Amiga' });
      const { status, body } = await call('POST', '/contact/remove', { number });
      expect({ status, body }).toEqual({
        status: 200,
        body: { success: true, message: 'Contact removed successfully', removed_contact: { jid: `${friend}@s.whatsapp.net`, phone: friend } },
      });
      expect((await book()).map((entry) => entry.jid)).not.toContain(`${friend}@s.whatsapp.net`);
    }
    const events = await contactEvents();
    expect(events.at(-1)?.payload.contacts).toContainEqual(expect.objectContaining({ jid: `${friend}@s.whatsapp.net`, contactName: '' }));
    const listed = (await call('GET', '/contacts')).body as Array<{ jid: string }>;
    expect(listed.map((contact) => contact.jid)).not.toContain(`${friend}@s.whatsapp.net`);
    expect(await call('POST', '/contact/remove', { number: friend })).toEqual({ status: 404, body: { error: 'Contact not found in the address book' } });
    expect(await call('POST', '/contact/remove', { number: friendLid })).toEqual({ status: 400, body: { error: 'Invalid number' } });
    expect(await call('POST', '/contact/remove', { number: '120363123456789012@g.us' })).toEqual({ status: 400, body: { error: 'Invalid number' } });
    expect(await call('POST', '/contact/remove', { number: 'abc' })).toEqual({ status: 400, body: { error: 'Invalid number' } });
    expect(await call('POST', '/contact/remove', {})).toEqual({ status: 400, body: { error: 'number is required' } });
    // The older spelling `phone`, with the stranger the phone saved.
    expect((await call('POST', '/contact/remove', { phone: `+${stranger}` })).status).toBe(200);
  });

  it('should tell which numbers are on WhatsApp with their JID and LID (POST /chat/check)', async () => {
    const nobody = nextPhone('5587');
    const { status, body } = await call('POST', '/chat/check', { numbers: [`+${friend}`, nobody, 'not a number'] });
    expect(status).toBe(200);
    expect(body).toEqual([
      { query: `+${friend}`, jid: `${friend}@s.whatsapp.net`, lid: friendLid, isInWhatsapp: true, verifiedName: '', groupName: '', error: '' },
      { query: nobody, jid: `${nobody}@s.whatsapp.net`, lid: '', isInWhatsapp: false, verifiedName: '', groupName: '', error: '' },
      { query: 'not a number', jid: '', lid: '', isInWhatsapp: false, verifiedName: '', groupName: '', error: 'Invalid number' },
    ]);
    expect(await call('POST', '/chat/check', {})).toEqual({ status: 400, body: { error: 'Missing numbers in payload' } });
    expect(await call('POST', '/chat/check', { numbers: [] })).toEqual({ status: 400, body: { error: 'Missing numbers in payload' } });
  });

  it('should answer the stored Chat record of a chat by number, JID or LID, with common_groups and the picture asked for (POST /chat/details)', async () => {
    await stack.control('POST', `/sim/accounts/${friend}/send`, { to: owner, text: 'oi, tudo bem?' });
    await call('POST', '/contact/add', { number: friend, name: 'Ana Detalhes' });
    const details = await waitFor(
      async () => await call('POST', '/chat/details', { number: friend }),
      (reply) => reply.status === 200 && reply.body.wa_contactName === 'Ana Detalhes',
      15_000,
      'the chat stored with its contact name',
    );
    expect(details.body).toMatchObject({
      wa_chatid: `${friend}@s.whatsapp.net`,
      wa_contactName: 'Ana Detalhes',
      wa_isGroup: false,
      common_groups: '',
    });
    expect(details.body.id).toMatch(/^r/);
    expect(details.body).toHaveProperty('image');
    expect(details.body).not.toHaveProperty('imagePreview');
    const byJid = await call('POST', '/chat/details', { number: `${friend}@s.whatsapp.net`, preview: true });
    expect(byJid.body.id).toBe(details.body.id);
    expect(byJid.body).toHaveProperty('imagePreview');
    expect(byJid.body).not.toHaveProperty('image');
    expect((await call('POST', '/chat/details', { number: friendLid })).body.id).toBe(details.body.id);
    expect(await call('POST', '/chat/details', { number: nextPhone('5588') })).toEqual({ status: 404, body: { error: 'Chat not found' } });
    expect(await call('POST', '/chat/details', { number: 'nope' })).toEqual({ status: 400, body: { error: 'Invalid number' } });
    expect(await call('POST', '/chat/details', {})).toEqual({ status: 400, body: { error: 'number is required' } });
  });
});
