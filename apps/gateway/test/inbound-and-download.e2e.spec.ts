import { spawnSync } from 'node:child_process';
import { ffmpegPath } from '@gw/platform';
import { nextPhone, Stack, waitFor } from './support/stack';

/** What the phone sends arrives as records and events; its media is downloadable through the API. */
describe('inbound messages and /message/download (HTTP)', () => {
  const stack = new Stack();
  let token: string;
  let owner: string;
  let contact: string;
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

  const findBy = (body: Record<string, unknown>) => stack.gw.call('POST', '/message/find', { token, body });
  const arrived = (predicate: (message: Record<string, any>) => boolean) =>
    waitFor(
      () => findBy({ fromMe: false, limit: 50 }),
      (r) => r.body.messages?.some(predicate),
      15_000,
      'inbound message',
    ).then((r) => r.body.messages.find(predicate));

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('inbound'));
    contact = nextPhone('5561');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Bruno' });
  }, 60_000);
  afterAll(() => stack.stop());

  it('should store a received text with both LID and phone number, in one chat, and announce it', async () => {
    await stack.control('POST', `/sim/accounts/${contact}/send`, { to: owner, text: 'oi, tudo bem?' });
    const message = await arrived((m) => m.text === 'oi, tudo bem?');
    expect(message).toMatchObject({
      fromMe: false,
      chatid: `${contact}@s.whatsapp.net`,
      sender_pn: `${contact}@s.whatsapp.net`,
      wasSentByApi: false,
      isGroup: false,
    });
    expect(message.sender_lid).toMatch(/@lid$/);
    const events: Array<{ payload: Record<string, any> }> = await stack.db.dataSource.query(`SELECT payload FROM outbox_events WHERE event_type = 'messages'`);
    const event = events.map((row) => row.payload).find((payload) => payload.message?.messageid === message.messageid);
    expect(event).toMatchObject({
      EventType: 'messages',
      chat: { wa_chatid: `${contact}@s.whatsapp.net`, wa_isGroup: false },
      message: { text: 'oi, tudo bem?' },
    });
    expect(event!.chat.wa_chatlid).toMatch(/@lid$/);
  });

  it('should download a received image as a link and as base64', async () => {
    await stack.control('POST', `/sim/accounts/${contact}/send-media`, {
      to: owner,
      type: 'image',
      data: png.toString('base64'),
      mimetype: 'image/png',
      caption: 'foto',
    });
    const message = await arrived((m) => m.messageType === 'ImageMessage' && m.text === 'foto');
    const { status, body } = await stack.gw.call('POST', '/message/download', { token, body: { id: message.id, return_base64: true } });
    expect(status).toBe(200);
    expect(body.mimetype).toBe('image/png');
    expect(Buffer.from(body.base64Data, 'base64').equals(png)).toBe(true);
    const link = new URL(body.fileURL);
    const file = await fetch(`${stack.gw.baseUrl}${link.pathname}`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true);
    expect((await fetch(`${stack.gw.baseUrl}/files/${'0'.repeat(32)}`)).status).toBe(404);
  });

  it('should download a received voice note as MP3', async () => {
    const ogg = spawnSync(
      ffmpegPath(),
      ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=frequency=300:duration=1', '-c:a', 'libopus', '-f', 'ogg', 'pipe:1'],
      { maxBuffer: 5_000_000 },
    ).stdout;
    await stack.control('POST', `/sim/accounts/${contact}/send-media`, {
      to: owner,
      type: 'audio',
      data: ogg.toString('base64'),
      mimetype: 'audio/ogg; codecs=opus',
      ptt: true,
      seconds: 1,
    });
    const message = await arrived((m) => m.messageType === 'AudioMessage');
    const { status, body } = await stack.gw.call('POST', '/message/download', { token, body: { id: message.messageid, return_base64: true } });
    expect(status).toBe(200);
    expect(body.mimetype).toBe('audio/mpeg');
    const mp3 = Buffer.from(body.base64Data, 'base64');
    expect(mp3.subarray(0, 3).toString() === 'ID3' || mp3[0] === 0xff).toBe(true);
  });

  it('should refuse to download a text message', async () => {
    const message = await arrived((m) => m.text === 'oi, tudo bem?');
    expect((await stack.gw.call('POST', '/message/download', { token, body: { id: message.id } })).status).toBe(400);
    expect((await stack.gw.call('POST', '/message/download', { token, body: { id: 'NOPE' } })).status).toBe(404);
  });

  it('should keep the raw copy of an interactive poll sent through /send/menu', async () => {
    const sent = await stack.gw.call('POST', '/send/menu', { token, body: { number: contact, type: 'poll', text: 'Cor?', choices: ['Azul', 'Verde'] } });
    expect(sent.status).toBe(200);
    const rows: Array<{ raw: string | null }> = await waitFor(
      () => stack.db.dataSource.query(`SELECT raw FROM messages WHERE message_id = $1`, [sent.body.messageid]),
      (r: Array<{ raw: string | null }>) => Boolean(r[0]?.raw),
      10_000,
      'raw copy of the poll',
    );
    expect(rows[0].raw).toContain('messageSecret');
  });
});
