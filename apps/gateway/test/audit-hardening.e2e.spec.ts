import { htmlPage, pdf, startFilesServer, type FilesServer } from './support/files-server';
import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * Bad input and edge cases from the gateway audit, through HTTP and the whole stack (worker, Baileys,
 * simulated phones): each answers a clear `{error}` or does what the spec says, never a 500.
 */
describe('audit hardening (HTTP → worker → Baileys → simulated phone)', () => {
  const stack = new Stack();
  let token: string;
  let ownPhone: string;
  let contact: string;
  let files: FilesServer;

  const post = (path: string, body: unknown) => stack.gw.call('POST', path, { token, body });
  const received = async (phone: string, messageId: string) => (await stack.received(phone, messageId, 15_000)).message;
  const sentText = async (text: string) => {
    const response = await post('/send/text', { number: contact, text });
    if (response.status !== 200) throw new Error(`/send/text → ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as { id: string; messageid: string };
  };

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: ownPhone } = await stack.connectedInstance('audit'));
    contact = nextPhone('5562');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
    files = await startFilesServer({
      '/bad-image-page': htmlPage(`<html><head><title>Loja torta</title><meta property="og:image" content="http://[bad"></head></html>`),
      '/metadata-image-page': htmlPage(
        `<html><head><title>Loja interna</title><meta property="og:image" content="http://169.254.169.254/latest/x.png"></head></html>`,
      ),
      '*.pdf': { contentType: 'application/pdf', body: pdf },
      '*.mp3': { contentType: 'audio/mpeg', body: mp3(2048) },
      '/page': htmlPage(`<html><head><title>Loja</title><meta property="og:image" content="/cover.png"></head></html>`),
    });
  }, 90_000);

  afterAll(async () => {
    await files?.close();
    await stack.stop();
  });

  describe('POST /message/find paging bounds (finding 1)', () => {
    it('should answer 400, not 500, for an offset or page beyond any history', async () => {
      const offset = await post('/message/find', { offset: 1e20 });
      expect(offset.status).toBe(400);
      expect(offset.body.error).toMatch(/^offset must not be greater than 1000000000/);
      const page = await post('/message/find', { page: 1e17, limit: 1000 });
      expect(page.status).toBe(400);
      expect(page.body.error).toMatch(/^page must not be greater than 1000000000/);
    });

    it('should page far past the end with the largest values taken (bound as query values)', async () => {
      const { status, body } = await post('/message/find', { page: 1_000_000_000, limit: 1000 });
      expect(status).toBe(200);
      expect(body).toMatchObject({ returnedMessages: 0, messages: [], offset: 999_999_999_000, hasMore: false });
      expect((await post('/message/find', { offset: 1_000_000_000 })).status).toBe(200);
    });
  });

  describe('link previews (findings 2 and 13)', () => {
    it('should send the preview without an image when the page’s og:image is not a URL', async () => {
      const { status, body } = await post('/send/text', { number: contact, text: `veja ${files.url}/bad-image-page`, linkPreview: true });
      expect(status).toBe(200);
      const preview = (await received(contact, body.messageid)).extendedTextMessage;
      expect(preview).toMatchObject({ title: 'Loja torta', matchedText: `${files.url}/bad-image-page` });
      expect(preview.jpegThumbnail).toBeUndefined();
    });

    it('should refuse a custom image the SSRF guard refuses in a small preview too, as in a large one', async () => {
      for (const linkPreviewLarge of [false, true]) {
        const { status, body } = await post('/send/text', {
          number: contact,
          text: `veja ${files.url}/page`,
          linkPreview: true,
          linkPreviewLarge,
          linkPreviewImage: 'http://169.254.169.254/latest/meta-data/x.png',
        });
        expect({ linkPreviewLarge, status }).toEqual({ linkPreviewLarge, status: 400 });
        expect(body.error).toMatch(/^linkPreviewImage refused: URL points to a private or reserved address \(169\.254\.169\.254\)/);
      }
    });

    it('should still leave out, silently, a page’s own og:image on a refused address', async () => {
      const { status, body } = await post('/send/text', { number: contact, text: `veja ${files.url}/metadata-image-page`, linkPreview: true });
      expect(status).toBe(200);
      const preview = (await received(contact, body.messageid)).extendedTextMessage;
      expect(preview).toMatchObject({ title: 'Loja interna' });
      expect(preview.jpegThumbnail).toBeUndefined();
    });

    it('should use an allowed custom image in a small preview', async () => {
      const { status, body } = await post('/send/text', {
        number: contact,
        text: `veja ${files.url}/page`,
        linkPreview: true,
        linkPreviewImage: `${files.url}/custom.png`,
      });
      expect(status).toBe(200);
      expect((await received(contact, body.messageid)).extendedTextMessage.jpegThumbnail).toBeTruthy();
    });
  });

  describe('file URLs with broken percent-encoding (finding 14)', () => {
    it('should send a document whose URL path is not valid percent-encoding, named as written', async () => {
      const { status, body } = await post('/send/media', { number: contact, type: 'document', file: `${files.url}/boleto%ZZ.pdf` });
      expect(status).toBe(200);
      const document = (await received(contact, body.messageid)).documentMessage;
      expect(document).toMatchObject({ mimetype: 'application/pdf', fileName: 'boleto%ZZ.pdf' });
    });
  });

  describe('array sizes (finding 15)', () => {
    it('should refuse more than 100 ids, or an id longer than 200 characters, in /message/markread', async () => {
      const many = await post('/message/markread', { id: Array.from({ length: 101 }, (_, n) => `ID${n}`) });
      expect(many).toEqual({ status: 400, body: { error: 'id: at most 100 message ids per request' } });
      const long = await post('/message/markread', { id: ['x'.repeat(201)] });
      expect(long).toEqual({ status: 400, body: { error: 'id: each message id must be at most 200 characters' } });
      const typed = await post('/message/markread', { id: [5] });
      expect(typed).toEqual({ status: 400, body: { error: 'id must be an array of message ids' } });
    });

    it('should answer 100 ids in one call, each found or not', async () => {
      const inbound = await stack.control<{ id: string }>('POST', `/sim/accounts/${contact}/send`, { to: ownPhone, text: 'leia isto' });
      await waitFor(
        () => post('/message/find', { id: inbound.id }),
        (r) => r.body.returnedMessages === 1,
        20_000,
        'inbound message stored',
      );
      const ids = [`${ownPhone}:${inbound.id}`, ...Array.from({ length: 99 }, (_, n) => `MISSING${n}`)];
      const { status, body } = await post('/message/markread', { id: ids });
      expect(status).toBe(200);
      expect(body.results).toHaveLength(100);
      expect(body.results.filter((result: { status: string }) => result.status === 'success')).toEqual([{ message_id: inbound.id, status: 'success' }]);
      expect(body.results.filter((result: { error?: string }) => result.error === 'Message not found')).toHaveLength(99);
    });

    it('should refuse a menu of more than 100 choices, a choice over 2000 characters, and a carousel of more than 10 cards', async () => {
      const choices = await post('/send/menu', { number: contact, type: 'list', text: 'Escolha', choices: Array.from({ length: 101 }, (_, n) => `Item ${n}`) });
      expect(choices).toEqual({ status: 400, body: { error: 'choices: at most 100 entries' } });
      const longChoice = await post('/send/menu', { number: contact, type: 'poll', text: 'Escolha', choices: ['a', 'b'.repeat(2001)] });
      expect(longChoice).toEqual({ status: 400, body: { error: 'choices: each entry must be at most 2000 characters' } });
      const card = { text: 'Card', buttons: [{ id: 'b', text: 'Quero' }] };
      const carousel = await post('/send/carousel', { number: contact, text: 'Veja', carousel: Array.from({ length: 11 }, () => card) });
      expect(carousel).toEqual({ status: 400, body: { error: 'carousel: at most 10 cards' } });
    });
  });

  describe('placeholders in /send/pix-button (finding 16)', () => {
    it('should replace placeholders in the button’s text', async () => {
      // The contact writes first: the chat and its profile name are known.
      const hello = await stack.control<{ id: string }>('POST', `/sim/accounts/${contact}/send`, { to: ownPhone, text: 'oi' });
      await waitFor(
        () => post('/message/find', { id: hello.id }),
        (r) => r.body.returnedMessages === 1,
        20_000,
        'first message stored',
      );
      const { status, body } = await post('/send/pix-button', {
        number: contact,
        pixType: 'EVP',
        pixKey: '3f1c8d2e-1111-2222-3333-444455556666',
        text: 'Pague aqui, {{wa_name}}',
      });
      expect(status).toBe(200);
      expect(body.sendPayload.text).toBe('Pague aqui, Cliente');
      const message = JSON.stringify(await received(contact, body.messageid));
      expect(message).toContain('Pague aqui, Cliente');
      expect(message).not.toContain('{{wa_name}}');
    });
  });

  describe('messages for wrong types (finding 17)', () => {
    it('should name the expected type before any length rule', async () => {
      expect(await post('/send/text', { number: 5511999999999, text: 'oi' })).toEqual({ status: 400, body: { error: 'number must be a string' } });
      expect(await post('/send/contact', { number: contact, fullName: 'Ana', phoneNumber: 5 })).toEqual({
        status: 400,
        body: { error: 'phoneNumber must be a string' },
      });
      expect(await post('/message/pin', { id: 123 })).toEqual({ status: 400, body: { error: 'id must be a string' } });
      expect(await post('/message/find', { offset: 'x' })).toEqual({ status: 400, body: { error: 'offset must be an integer number' } });
    });

    it('should keep the length message for a string that is too long', async () => {
      const { status, body } = await post('/send/text', { number: '5'.repeat(201), text: 'oi' });
      expect(status).toBe(400);
      expect(body.error).toBe('number must be shorter than or equal to 200 characters');
    });
  });

  describe('the `<owner>:<messageid>` id form (finding 19)', () => {
    it('should quote a message named by replyid in the API’s id form', async () => {
      const original = await sentText('pergunta original');
      const { status, body } = await post('/send/text', { number: contact, text: 'resposta', replyid: `${ownPhone}:${original.messageid}` });
      expect(status).toBe(200);
      const reply = (await received(contact, body.messageid)).extendedTextMessage;
      expect(reply).toMatchObject({ text: 'resposta', contextInfo: { stanzaId: original.messageid } });
    });

    it('should find a message by id in the API’s id form', async () => {
      const original = await sentText('me encontre');
      const { body } = await post('/message/find', { id: `${ownPhone}:${original.messageid}` });
      expect(body.messages.map((message: { messageid: string }) => message.messageid)).toEqual([original.messageid]);
    });

    it('should take an OrderMessage named in the API’s id form as orderMessageId', async () => {
      const order = await stack.control<{ id: string }>('POST', `/sim/accounts/${contact}/send`, {
        to: ownPhone,
        message: {
          orderMessage: { orderId: '4455', itemCount: 2, status: 1, surface: 1, orderTitle: 'Carrinho', totalAmount1000: 12_500, totalCurrencyCode: 'BRL' },
        },
      });
      await waitFor(
        () => post('/message/find', { id: order.id }),
        (r) => r.body.messages?.[0]?.messageType === 'OrderMessage',
        20_000,
        'order stored',
      );
      const { status, body } = await post('/send/request-payment', {
        number: contact,
        orderMessageId: `${ownPhone}:${order.id}`,
        pixKey: '3f1c8d2e-1111-2222-3333-444455556666',
      });
      expect({ status, error: body.error || undefined }).toEqual({ status: 200, error: undefined });
      const interactive = (await received(contact, body.messageid)).viewOnceMessage.message.interactiveMessage;
      const payment = JSON.parse(interactive.nativeFlowMessage.buttons[0].buttonParamsJson);
      expect(payment.total_amount).toEqual({ value: 1250, offset: 100 });
    });
  });

  describe('failure wording per endpoint (finding 20)', () => {
    const refuseNext = () => stack.control('POST', '/sim/faults', { kind: 'ack', mode: 'error', error: '463', device: ownPhone, count: 1 });

    it('should answer "failed to send location" when WhatsApp refuses a location button', async () => {
      await refuseNext();
      const { status, body } = await post('/send/location-button', { number: contact, text: 'Onde você está?' });
      expect(status).toBe(502);
      expect(body.error).toMatch(/^failed to send location: /);
      expect(body).toMatchObject({ error_source: 'whatsapp_server', provider_code: 463 });
    });

    it('should answer "failed to send payment request" when WhatsApp refuses a payment request', async () => {
      await refuseNext();
      const { status, body } = await post('/send/request-payment', { number: contact, amount: 10, pixKey: '3f1c8d2e-1111-2222-3333-444455556666' });
      expect(status).toBe(502);
      expect(body.error).toMatch(/^failed to send payment request: /);
    });
  });

  describe('pin response (finding 21)', () => {
    it('should carry an emoji in `reaction`', async () => {
      const original = await sentText('fixe esta');
      const { status, body } = await post('/message/pin', { id: `${ownPhone}:${original.messageid}`, pin: true, duration: 7 });
      expect(status).toBe(200);
      expect(body).toMatchObject({ messageType: 'PinInChatMessage', targetMessageID: original.messageid, pinned: true, reaction: '\u{1F4CC}' });
    });
  });

  describe('SSE Last-Event-ID bounds (finding 22)', () => {
    it('should answer 400 for an id the event id column cannot hold, and open for the largest it can', async () => {
      const tooBig = await stack.gw.call('GET', '/sse', { token, headers: { 'last-event-id': '9999999999999999999' } });
      expect(tooBig.status).toBe(400);
      expect(typeof tooBig.body.error).toBe('string');
      const controller = new AbortController();
      const largest = await fetch(`${stack.gw.baseUrl}/sse`, { headers: { token, 'last-event-id': '9223372036854775807' }, signal: controller.signal });
      expect(largest.status).toBe(200);
      controller.abort();
    });
  });
});

/** The typing indicator of a delayed audio send, as another linked account sees it (finding 18). */
describe('delay indicator of an audio send (HTTP → worker → Baileys → another instance)', () => {
  const stack = new Stack();
  let files: FilesServer;

  beforeAll(async () => {
    await stack.start();
    files = await startFilesServer({ '*.mp3': { contentType: 'audio/mpeg', body: mp3(4096) } });
  }, 90_000);

  afterAll(async () => {
    await files?.close();
    await stack.stop();
  });

  it('should show "recording", not "typing", while a plain audio file waits its delay', async () => {
    const sender = await stack.connectedInstance('audio-sender');
    const receiver = await stack.connectedInstance('audio-receiver');
    const senderJid = `${sender.phone}@s.whatsapp.net`;
    // The receiver may know the sender only by LID (no chat between them yet).
    const senderLid = (await stack.control<{ lid: string }>('GET', `/sim/accounts/${sender.phone}`)).lid;
    const states = () =>
      stack.db.dataSource
        .query(`SELECT payload FROM outbox_events WHERE instance_id = $1 AND event_type = 'presence' ORDER BY id`, [receiver.id])
        .then((rows: Array<{ payload: { type: string; event: { Chat: string; State: string } } }>) =>
          rows
            .filter((row) => row.payload.type === 'ChatPresence' && [senderJid, senderLid].includes(row.payload.event.Chat))
            .map((row) => row.payload.event.State),
        );

    const { status, body } = await stack.gw.call('POST', '/send/media', {
      token: sender.token,
      body: { number: receiver.phone, type: 'audio', file: `${files.url}/voz.mp3`, delay: 1_500 },
    });
    expect({ status, error: body.error || undefined }).toEqual({ status: 200, error: undefined });
    const [first] = await waitFor(states, (list) => list.length > 0, 20_000, 'the sender’s chat state at the receiver');
    expect(first).toBe('recording');
  });
});

/** `size` bytes starting with an MPEG audio frame header (the worker checks that an audio's bytes are audio). */
function mp3(size: number): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(size - 4, 7)]);
}
