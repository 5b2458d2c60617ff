import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * Fields of the spec's Message record that were missing or always empty: fileURL (sent media, a
 * downloaded received file), callPeer on messages of messageType `call`, and ai_metadata.
 */
describe('Message record: fileURL, call messages with callPeer, ai_metadata', () => {
  const stack = new Stack();
  let token: string;
  let ownPhone: string;
  let contact: string;
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

  const find = async (body: Record<string, unknown>) =>
    (await stack.gw.call('POST', '/message/find', { token, body })).body.messages as Array<Record<string, any>>;
  const fetchLink = (url: string) => fetch(`${stack.gw.baseUrl}${new URL(url).pathname}`);

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: ownPhone } = await stack.connectedInstance('record-fields'));
    contact = nextPhone('5571');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Carla' });
  }, 60_000);
  afterAll(() => stack.stop());

  it('a base64 file sent through /send/media gets a fileUrl the gateway serves, kept as the record fileURL', async () => {
    const { status, body } = await stack.gw.call('POST', '/send/media', {
      token,
      body: { number: contact, type: 'image', file: png.toString('base64'), text: 'foto' },
    });
    expect(status).toBe(200);
    expect(body.response.fileUrl).toMatch(/\/files\/[0-9a-f]{32}$/);
    expect(body.fileURL).toBe(body.response.fileUrl);
    const file = await fetchLink(body.response.fileUrl);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true);
    const [stored] = await find({ id: body.id });
    expect(stored.fileURL).toBe(body.response.fileUrl);
    expect(stored.ai_metadata).toEqual({});
    expect(stored).not.toHaveProperty('callPeer');
  });

  it('a file sent by URL keeps that URL as its fileURL (a queued send too)', async () => {
    const url = 'https://cdn.example.com/a/picture.png';
    const queued = await stack.gw.call('POST', '/send/media', { token, body: { number: contact, type: 'image', file: url, async: true } });
    expect(queued.status).toBe(200);
    expect(queued.body.response.fileUrl).toBe(url);
    expect((await find({ id: queued.body.id }))[0].fileURL).toBe(url);
  });

  it('a received file gets its fileURL once /message/download stored it', async () => {
    await stack.control('POST', `/sim/accounts/${contact}/send-media`, {
      to: ownPhone,
      type: 'image',
      data: png.toString('base64'),
      mimetype: 'image/png',
      caption: 'recebida',
    });
    const arrived = await waitFor(
      () => find({ fromMe: false, limit: 50 }),
      (messages) => messages.some((message) => message.text === 'recebida'),
      15_000,
      'received image',
    );
    const received = arrived.find((message) => message.text === 'recebida')!;
    expect(received.fileURL).toBe('');
    const download = await stack.gw.call('POST', '/message/download', { token, body: { id: received.id, return_link: false } });
    expect(download.status).toBe(200);
    const [after] = await find({ id: received.id });
    expect(after.fileURL).toMatch(/\/files\/[0-9a-f]{32}$/);
    expect((await fetchLink(after.fileURL)).status).toBe(200);
  });

  it('an incoming call is stored as a message of messageType call with its callPeer, and follows the call', async () => {
    // The contact is known by name once it has written.
    await stack.control('POST', `/sim/accounts/${contact}/send`, { to: ownPhone, text: 'vou ligar' });
    await waitFor(
      () => find({ fromMe: false, limit: 50 }),
      (messages) => messages.some((message) => message.text === 'vou ligar'),
      15_000,
      'text stored',
    );
    const call = await stack.control<{ id: string }>('POST', `/sim/accounts/${contact}/call`, { to: ownPhone, video: true });
    const [offer] = await waitFor(
      () => find({ id: call.id }),
      (messages) => messages.length === 1,
      15_000,
      'call message',
    );
    expect(offer).toMatchObject({
      messageid: call.id,
      messageType: 'call',
      chatid: `${contact}@s.whatsapp.net`,
      fromMe: false,
      isGroup: false,
      callPeer: { jid: `${contact}@s.whatsapp.net`, name: 'Carla', imagePreviewUrl: expect.any(String) },
      content: { callId: call.id, isVideo: true, status: 'offer' },
    });
    expect(offer.id).toMatch(/^r[0-9a-f]{7}$/);
    await stack.control('POST', `/sim/calls/${call.id}/end`, { reason: 'timeout' });
    const [ended] = await waitFor(
      () => find({ id: call.id }),
      (messages) => messages[0]?.content?.status !== 'offer',
      15_000,
      'call end',
    );
    expect(ended).toMatchObject({ id: offer.id, messageType: 'call', callPeer: offer.callPeer, content: { status: 'timeout' } });
    expect((await find({ messageType: 'call' })).map((message) => message.messageid)).toEqual([call.id]);
  });
});
