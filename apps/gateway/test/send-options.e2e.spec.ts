import { nextPhone, Stack, waitFor } from './support/stack';
import { sineWav } from '@gw/testing';

/**
 * The send options the spec lists for every send endpoint (replyid, mentions incl. `all`, forward,
 * delay, readchat, readmessages), the @newsletter target, the media variants and the group pin
 * permission, through the whole stack; what the simulated phones receive decides.
 */
describe('send options and media variants (HTTP → worker → Baileys → simulated phone)', () => {
  const stack = new Stack();
  let token: string;
  let ownPhone: string;
  let contact: string;
  let member: string;
  let groupJid: string;
  let group: { participants: Array<{ phone: string; jid: string; lid: string }> };

  const post = (path: string, body: Record<string, unknown>) => stack.gw.call('POST', path, { token, body });
  const ok = async (path: string, body: Record<string, unknown>) => {
    const response = await post(path, body);
    if (response.status !== 200) throw new Error(`${path} → ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const receivedBy = (phone: string, messageId: string) => stack.received(phone, messageId, 15_000);
  /** The content of a decoded message inside its envelopes, and its field name. */
  const contentOf = (message: Record<string, any>): { field: string; body: Record<string, any> } => {
    let inner = message;
    for (;;) {
      const envelope = ['viewOnceMessage', 'viewOnceMessageV2', 'viewOnceMessageV2Extension', 'ephemeralMessage', 'documentWithCaptionMessage'].find(
        (key) => inner[key]?.message,
      );
      if (!envelope) break;
      inner = inner[envelope].message;
    }
    // (The first message of a sender to a group also carries its sender key: not the content.)
    const field = Object.keys(inner).find(
      (key) => key !== 'messageContextInfo' && key !== 'senderKeyDistributionMessage' && inner[key] && typeof inner[key] === 'object',
    )!;
    return { field, body: inner[field] };
  };
  /** A message the contact's phone sent to the instance, once it is stored. */
  const fromContact = async (text: string, to = ownPhone) => {
    const { id } = await stack.control<{ id: string }>('POST', `/sim/accounts/${contact}/send`, { to, text });
    await waitFor(
      () => stack.db.dataSource.query(`SELECT 1 FROM messages WHERE message_id = $1 AND raw IS NOT NULL`, [id]),
      (rows: unknown[]) => rows.length === 1,
      15_000,
      `message ${id} stored`,
    );
    return id;
  };

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: ownPhone } = await stack.connectedInstance('options'));
    contact = nextPhone('5541');
    member = nextPhone('5541');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
    await stack.control('POST', '/sim/accounts', { phone: member, name: 'Membro' });
    // The contact created the group: the instance is a plain member (not an admin).
    group = await stack.control('POST', '/sim/groups', { creator: contact, subject: 'Opções', participants: [ownPhone, member] });
    groupJid = (group as unknown as { jid: string }).jid;
  }, 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  describe('replyid, mentions and forward on interactive sends', () => {
    const card = { text: 'Card', image: 'https://example.invalid/not-fetched.jpg', buttons: [{ id: 'c1', text: 'Pick', type: 'REPLY' }] };
    it.each([
      ['/send/menu (buttons)', '/send/menu', { type: 'button', text: 'Choose', choices: ['Yes|yes', 'No|no'] }],
      ['/send/menu (poll)', '/send/menu', { type: 'poll', text: 'Vote', choices: ['A', 'B'] }],
      ['/send/menu (list)', '/send/menu', { type: 'list', text: 'Pick', listButton: 'Open', choices: ['[Section]', 'Item|i1'] }],
      ['/send/carousel', '/send/carousel', { text: 'Cards', carousel: [{ ...card, image: undefined }] }],
      ['/send/pix-button', '/send/pix-button', { pixType: 'EVP', pixKey: '3f1c8d2e-1111-2222-3333-444455556666' }],
      ['/send/request-payment', '/send/request-payment', { amount: 10, pixKey: 'pay@shop.com', pixType: 'EMAIL' }],
      ['/send/location-button', '/send/location-button', { text: 'Where?' }],
    ])('%s should quote, mention and mark forwarded', async (_name, path, body) => {
      const original = await fromContact(`quote me (${path})`);
      const record = await ok(path, { number: contact, ...body, replyid: original, mentions: member, forward: true });
      expect(record.quoted).toBe(original);
      const { body: content } = contentOf((await receivedBy(contact, record.messageid)).message);
      expect(content.contextInfo).toMatchObject({
        stanzaId: original,
        participant: expect.stringMatching(/@(s\.whatsapp\.net|lid)$/),
        quotedMessage: expect.objectContaining({ conversation: `quote me (${path})` }),
        mentionedJid: [`${member}@s.whatsapp.net`],
        isForwarded: true,
      });
    });
  });

  describe('mentions', () => {
    it('should mention every participant of a group with mentions=all (text and menu)', async () => {
      const everyone = group.participants.map((participant) => [participant.jid, participant.lid]);
      const isParticipant = (jid: string) => everyone.some((forms) => forms.includes(jid));
      for (const [path, body] of [
        ['/send/text', { text: '@todos atenção' }],
        ['/send/menu', { type: 'button', text: 'Todos', choices: ['Ok|ok'] }],
      ] as const) {
        const record = await ok(path, { number: groupJid, ...body, mentions: 'all' });
        const { body: content } = contentOf((await receivedBy(member, record.messageid)).message);
        const mentioned: string[] = content.contextInfo?.mentionedJid ?? [];
        expect(mentioned).toHaveLength(group.participants.length);
        expect(mentioned.every(isParticipant)).toBe(true);
        expect(new Set(mentioned.map((jid) => everyone.findIndex((forms) => forms.includes(jid)))).size).toBe(group.participants.length);
      }
    });

    it('should mention the numbers given, and refuse a group or newsletter as a mention', async () => {
      const record = await ok('/send/text', { number: groupJid, text: 'olá', mentions: `${member}, ${contact}` });
      const { body: content } = contentOf((await receivedBy(member, record.messageid)).message);
      expect(content.contextInfo.mentionedJid).toEqual([`${member}@s.whatsapp.net`, `${contact}@s.whatsapp.net`]);
      expect((await post('/send/text', { number: groupJid, text: 'x', mentions: groupJid })).status).toBe(400);
    });
  });

  describe('readmessages and readchat', () => {
    it('readmessages should send read receipts for the messages the contact sent', async () => {
      const ids = [await fromContact('read me 1'), await fromContact('read me 2')];
      await ok('/send/text', { number: contact, text: 'answering', readmessages: true });
      const outbox = await waitFor(
        () => stack.control<Array<{ id: string; status: string }>>('GET', `/sim/accounts/${contact}/outbox`),
        (sent) => ids.every((id) => sent.find((entry) => entry.id === id)?.status === 'read'),
        15_000,
        'read receipts at the contact',
      );
      expect(outbox.filter((entry) => ids.includes(entry.id)).map((entry) => entry.status)).toEqual(['read', 'read']);
    });

    it('readchat should zero the chat unread count (and read its messages)', async () => {
      const id = await fromContact('unread');
      const unread = () =>
        stack.db.dataSource.query(`SELECT unread_count FROM chats WHERE wa_chatid = $1`, [`${contact}@s.whatsapp.net`]) as Promise<
          Array<{ unread_count: number }>
        >;
      await waitFor(unread, (rows) => rows.length === 1 && Number(rows[0].unread_count) > 0, 15_000, 'an unread chat');
      await ok('/send/text', { number: contact, text: 'seen', readchat: true });
      expect(Number((await unread())[0].unread_count)).toBe(0);
      await waitFor(
        () => stack.control<Array<{ id: string; status: string }>>('GET', `/sim/accounts/${contact}/outbox`),
        (sent) => sent.find((entry) => entry.id === id)?.status === 'read',
        15_000,
        'read receipt',
      );
    });
  });

  describe('delay', () => {
    const chatstates = () =>
      stack.control<{ chatstates: Array<{ from: string; state: string; media?: string; t: number }> }>('GET', `/sim/accounts/${contact}/chatstates`);

    it('should show composing during the delay, then paused, before the message arrives', async () => {
      const before = (await chatstates()).chatstates.length;
      const record = await ok('/send/text', { number: contact, text: 'after typing', delay: 1_200 });
      const arrived = await receivedBy(contact, record.messageid);
      const seen = (await chatstates()).chatstates.slice(before).filter((entry) => entry.from === `${ownPhone}@s.whatsapp.net`);
      expect(seen.map((entry) => [entry.state, entry.media ?? ''])).toEqual([
        ['composing', ''],
        ['paused', ''],
      ]);
      // In that order at the phone: typing, stopped, then the message (no durations: the machine is loaded).
      expect(seen[0].t).toBeLessThanOrEqual(seen[1].t);
      expect(seen[1].t).toBeLessThanOrEqual((arrived as unknown as { receivedAt: number }).receivedAt);
    });

    it('should show recording for a voice note', async () => {
      const before = (await chatstates()).chatstates.length;
      await ok('/send/media', { number: contact, type: 'ptt', file: wav().toString('base64'), delay: 300 });
      const seen = (await chatstates()).chatstates.slice(before).filter((entry) => entry.from === `${ownPhone}@s.whatsapp.net`);
      expect(seen.map((entry) => [entry.state, entry.media ?? ''])).toEqual([
        ['composing', 'audio'],
        ['paused', ''],
      ]);
    });
  });

  describe('media variants through /send/media', () => {
    const media = (phone: string, id: string) =>
      fetch(`${stack.sim.controlUrl}/sim/accounts/${phone}/inbox/${id}/media`).then(async (response) => Buffer.from(await response.arrayBuffer()));

    it.each(['ptt', 'myaudio'])('%s should convert a WAV to an Opus voice note', async (type) => {
      const record = await ok('/send/media', { number: contact, type, file: wav().toString('base64') });
      const { field, body } = contentOf((await receivedBy(contact, record.messageid)).message);
      expect(field).toBe('audioMessage');
      expect(body).toMatchObject({ ptt: true, mimetype: 'audio/ogg; codecs=opus' });
      const bytes = await media(contact, record.messageid);
      expect(bytes.subarray(0, 4).toString()).toBe('OggS');
      expect(bytes.includes(Buffer.from('OpusHead'))).toBe(true);
    });

    it('audio should stay an audio file, not a voice note', async () => {
      const record = await ok('/send/media', { number: contact, type: 'audio', file: wav().toString('base64'), mimetype: 'audio/wav' });
      const { field, body } = contentOf((await receivedBy(contact, record.messageid)).message);
      expect(field).toBe('audioMessage');
      expect(body.ptt ?? false).toBe(false);
      expect((await media(contact, record.messageid)).subarray(0, 4).toString()).toBe('RIFF');
    });

    it('videoplay should send a video that plays as a GIF', async () => {
      const record = await ok('/send/media', { number: contact, type: 'videoplay', file: mp4().toString('base64'), text: 'loop' });
      const { field, body } = contentOf((await receivedBy(contact, record.messageid)).message);
      expect(field).toBe('videoMessage');
      expect(body).toMatchObject({ gifPlayback: true, caption: 'loop' });
    });

    it('ptv should send a round video note', async () => {
      const record = await ok('/send/media', { number: contact, type: 'ptv', file: mp4().toString('base64') });
      const { field } = contentOf((await receivedBy(contact, record.messageid)).message);
      expect(field).toBe('ptvMessage');
    });

    it('sticker should send a WebP sticker', async () => {
      const record = await ok('/send/media', { number: contact, type: 'sticker', file: webp().toString('base64') });
      const { field, body } = contentOf((await receivedBy(contact, record.messageid)).message);
      expect(field).toBe('stickerMessage');
      expect(body.mimetype).toBe('image/webp');
      expect((await media(contact, record.messageid)).equals(webp())).toBe(true);
    });

    it('viewOnce should wrap the media as view once', async () => {
      const record = await ok('/send/media', { number: contact, type: 'image', file: PNG.toString('base64'), viewOnce: true });
      const { message } = await receivedBy(contact, record.messageid);
      expect(Object.keys(message).some((key) => key.startsWith('viewOnceMessage'))).toBe(true);
      const { field, body } = contentOf(message);
      expect(field).toBe('imageMessage');
      expect(body.viewOnce).toBe(true);
    });
  });

  describe('sendPayload', () => {
    it('should keep a long text whole and leave out only inline files (a queued send too)', async () => {
      const text = `Olá, ${'uma mensagem longa '.repeat(60)}`;
      expect((await ok('/send/text', { number: contact, text })).sendPayload.text).toBe(text);
      const queued = await ok('/send/text', { number: contact, text, async: true });
      const [stored] = await stack.db.dataSource.query(`SELECT send_payload FROM messages WHERE message_id = $1`, [queued.messageid]);
      expect(stored.send_payload.text).toBe(text);
      const image = await ok('/send/media', { number: contact, type: 'image', file: PNG.toString('base64'), text: 'caption' });
      expect(image.sendPayload).toMatchObject({ file: '[base64 omitted]', text: 'caption' });
    });
  });

  describe('sending to a channel (@newsletter)', () => {
    it('should post to a channel the instance owns, given the full @newsletter JID', async () => {
      const channel = await stack.control<{ jid: string }>('POST', '/sim/newsletters', { owner: ownPhone, name: 'Novidades', followers: [contact] });
      const record = await ok('/send/text', { number: channel.jid, text: 'post for followers' });
      expect(record.chatid).toBe(channel.jid);
      const posts = await waitFor(
        () => stack.control<{ posts: Array<{ id: string; message: Record<string, any> }> }>('GET', `/sim/newsletters/${channel.jid}`),
        (info) => info.posts.some((post) => post.id === record.messageid),
        15_000,
        'the post in the channel',
      );
      const { body, field } = contentOf(posts.posts.find((post) => post.id === record.messageid)!.message);
      expect(field === 'extendedTextMessage' ? body.text : body).toBe('post for followers');
    });
  });

  describe('pin in a group (the group decides who may pin)', () => {
    it('should refuse a member that is not an admin when only admins edit the group, and allow otherwise', async () => {
      const { id } = await stack.control<{ id: string }>('POST', `/sim/accounts/${contact}/send`, { to: groupJid, text: 'pin this' });
      await waitFor(
        () => stack.db.dataSource.query(`SELECT 1 FROM messages WHERE message_id = $1`, [id]),
        (rows: unknown[]) => rows.length === 1,
        15_000,
        'group message stored',
      );

      await stack.control('POST', `/sim/groups/${groupJid}/settings`, { locked: true });
      const refused = await post('/message/pin', { id });
      expect(refused).toEqual({ status: 400, body: { error: 'error pinning message: in this group only admins may pin messages' } });

      await stack.control('POST', `/sim/groups/${groupJid}/settings`, { locked: false });
      expect((await post('/message/pin', { id })).status).toBe(200);

      await stack.control('POST', `/sim/groups/${groupJid}/participants`, { action: 'promote', participants: [ownPhone] });
      await stack.control('POST', `/sim/groups/${groupJid}/settings`, { locked: true });
      const asAdmin = await post('/message/pin', { id, pin: false });
      expect(asAdmin.status).toBe(200);
      expect(asAdmin.body).toMatchObject({ messageType: 'PinInChatMessage', targetMessageID: id, pinned: false });
    });
  });
});

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/** One second of a 440 Hz tone, 16-bit mono PCM WAV at 8 kHz (not Opus: a voice note must be converted). */
const wav = (): Buffer => sineWav(440, 1_000, 8_000);

/** The bytes of an MP4 as far as a media send cares (the file type box; the phone does not play it). */
function mp4(): Buffer {
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write('ftypisom', 4);
  ftyp.writeUInt32BE(512, 12);
  ftyp.write('isommp41', 16);
  return Buffer.concat([ftyp, Buffer.alloc(256, 1)]);
}

/** A RIFF/WEBP container header and some payload. */
function webp(): Buffer {
  const body = Buffer.concat([Buffer.from('WEBPVP8 '), Buffer.alloc(64, 2)]);
  const header = Buffer.alloc(8);
  header.write('RIFF', 0);
  header.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, body]);
}
