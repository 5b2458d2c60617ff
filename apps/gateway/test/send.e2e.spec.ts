import { htmlPage, startFilesServer, type FilesServer } from './support/files-server';
import { nextPhone, Stack } from './support/stack';

/** Sends through the whole stack; the receiving simulated phone decodes each message. */
describe('send endpoints (HTTP → worker → Baileys → simulated phone)', () => {
  const stack = new Stack();
  let token: string;
  let contact: string;
  let files: FilesServer;

  const received = (messageId: string) => stack.received(contact, messageId);

  beforeAll(async () => {
    await stack.start();
    ({ token } = await stack.connectedInstance('sender'));
    contact = nextPhone('5541');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
    files = await startFilesServer({
      '/page': htmlPage('<html><head><title>Shop page</title><meta property="og:description" content="Best prices"></head></html>'),
    });
  }, 60_000);

  afterAll(async () => {
    await files?.close();
    await stack.stop();
  });

  describe('POST /send/text', () => {
    it('should send a text, answer the record with response, and reach the phone', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/text', {
        token,
        body: { number: contact, text: 'Olá!', track_source: 'crm', track_id: 'T-1' },
      });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        chatid: `${contact}@s.whatsapp.net`,
        fromMe: true,
        wasSentByApi: true,
        status: 'Sent',
        text: 'Olá!',
        track_source: 'crm',
        track_id: 'T-1',
        sendFunction: 'SendTextMessage',
      });
      expect(body.response).toEqual({ status: 'success', message: 'Message sent successfully' });
      expect(body.id).toMatch(/^r[0-9a-f]{7}$/);
      const message = await received(body.messageid);
      expect(message.message.extendedTextMessage?.text ?? message.message.conversation).toBe('Olá!');
    });

    it('should answer 400 missing number or text', async () => {
      expect(await stack.gw.call('POST', '/send/text', { token, body: { number: contact } })).toEqual({
        status: 400,
        body: { error: 'missing number or text' },
      });
      expect(await stack.gw.call('POST', '/send/text', { token, body: { text: 'x' } })).toEqual({ status: 400, body: { error: 'missing number or text' } });
      expect((await stack.gw.call('POST', '/send/text', { token, body: { number: 'abc', text: 'x' } })).status).toBe(400);
    });

    it('should build a link preview only with linkPreview=true, custom title first', async () => {
      const { body } = await stack.gw.call('POST', '/send/text', {
        token,
        body: { number: contact, text: `see ${files.url}/page`, linkPreview: true, linkPreviewTitle: 'Custom' },
      });
      const message = await received(body.messageid);
      expect(message.message.extendedTextMessage).toMatchObject({ title: 'Custom', description: 'Best prices', matchedText: `${files.url}/page` });
      const plain = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: `see ${files.url}/page` } });
      expect((await received(plain.body.messageid)).message.extendedTextMessage?.title ?? '').toBe('');
    });

    it('should quote a message with replyid and mark it forwarded', async () => {
      const first = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'original' } });
      const reply = await stack.gw.call('POST', '/send/text', {
        token,
        body: { number: contact, text: 'reply', replyid: first.body.messageid, forward: true },
      });
      expect(reply.status).toBe(200);
      const context = (await received(reply.body.messageid)).message.extendedTextMessage.contextInfo;
      expect(context).toMatchObject({ stanzaId: first.body.messageid, isForwarded: true });
    });

    it('should refuse a reply to a message it does not know', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'reply', replyid: 'NOPE' } });
      expect(status).toBe(404);
      expect(body.error).toMatch(/not found/);
    });
  });

  describe('POST /send/media', () => {
    it('should send an image by URL', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/media', {
        token,
        body: { number: contact, type: 'image', file: `${files.url}/pic.png`, text: 'caption' },
      });
      expect(status).toBe(200);
      expect(body.response.fileUrl).toBe(`${files.url}/pic.png`);
      expect((await received(body.messageid)).message.imageMessage).toMatchObject({ caption: 'caption' });
    });

    it('should send a document from base64', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/media', {
        token,
        body: { number: contact, type: 'document', file: Buffer.from('hello pdf').toString('base64'), docName: 'a.pdf', mimetype: 'application/pdf' },
      });
      expect(status).toBe(200);
      expect(body.sendPayload.file).toBeDefined();
      expect((await received(body.messageid)).message.documentMessage).toMatchObject({ fileName: 'a.pdf', mimetype: 'application/pdf' });
    });

    it('should refuse a private URL the allowlist does not cover, and bad types', async () => {
      expect((await stack.gw.call('POST', '/send/media', { token, body: { number: contact, type: 'gif', file: `${files.url}/x` } })).status).toBe(400);
      expect((await stack.gw.call('POST', '/send/media', { token, body: { number: contact, type: 'image' } })).status).toBe(400);
      const metadata = await stack.gw.call('POST', '/send/media', { token, body: { number: contact, type: 'image', file: 'http://169.254.169.254/x.png' } });
      expect(metadata.status).toBe(400);
      expect(metadata.body.error).toMatch(/refused/);
    });
  });

  describe('POST /send/contact and /send/location', () => {
    it('should send a vCard', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/contact', {
        token,
        body: { number: contact, fullName: 'Ana Souza', phoneNumber: '5511999990000,5511988887777', organization: 'ACME' },
      });
      expect(status).toBe(200);
      const vcard = (await received(body.messageid)).message.contactMessage.vcard as string;
      expect(vcard).toContain('FN:Ana Souza');
      expect(vcard).toContain('waid=5511988887777');
    });

    it('should send a location and refuse invalid coordinates', async () => {
      const { status, body } = await stack.gw.call('POST', '/send/location', {
        token,
        body: { number: contact, latitude: -23.55, longitude: '-46.63', name: 'Loja' },
      });
      expect(status).toBe(200);
      expect((await received(body.messageid)).message.locationMessage).toMatchObject({ degreesLatitude: -23.55, degreesLongitude: -46.63, name: 'Loja' });
      expect(await stack.gw.call('POST', '/send/location', { token, body: { number: contact, latitude: 91, longitude: 0 } })).toEqual({
        status: 400,
        body: { error: 'missing required fields or invalid coordinates' },
      });
    });
  });

  describe('POST /message/presence', () => {
    it('should send a chat presence', async () => {
      expect(await stack.gw.call('POST', '/message/presence', { token, body: { number: contact, presence: 'composing', delay: 100 } })).toEqual({
        status: 200,
        body: { response: 'Chat presence sent successfully' },
      });
      expect((await stack.gw.call('POST', '/message/presence', { token, body: { number: contact, presence: 'dancing' } })).status).toBe(400);
    });
  });

  it('should answer No session for an instance that is not connected', async () => {
    const idle = await stack.gw.createInstance('idle');
    expect(await stack.gw.call('POST', '/send/text', { token: idle.token, body: { number: contact, text: 'hi' } })).toEqual({
      status: 409,
      body: { error: 'No session' },
    });
  });
});
