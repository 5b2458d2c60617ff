import { startGateway, type GatewayHarness } from './support/gateway-harness';

const MB = 1024 * 1024;
const png = (size = 64) => Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(Math.max(0, size - 8), 1)]);
const pdf = (size = 64) => Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(Math.max(0, size - 9), 0x20)]);
const mp4 = (size = 64) => Buffer.concat([Buffer.from('00000018667479706d703432', 'hex'), Buffer.alloc(Math.max(0, size - 12), 0)]);

/** Quick replies over HTTP: every kind, update, delete, listings, error shapes, file limits and isolation. */
describe('quick replies (/quickreply/edit, /quickreply/showall, GET /quick-replies/{id})', () => {
  let gateway: GatewayHarness;
  let token: string;
  let otherToken: string;

  const edit = (body: unknown, as = token) => gateway.call('POST', '/quickreply/edit', { token: as, body });
  const create = async (body: Record<string, unknown>, as = token) => {
    const response = await edit(body, as);
    expect({ status: response.status, body: response.body }).toMatchObject({ status: 200, body: { message: 'Quick reply created' } });
    return response.body.quickReply as Record<string, any>;
  };
  const refused = async (body: unknown, error: string | RegExp) => {
    const response = await edit(body);
    expect(response).toEqual({
      status: 400,
      body: { error: expect.stringMatching(typeof error === 'string' ? new RegExp(`^${escape(error)}$`) : error), code: 'validation_failed' },
    });
  };
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  beforeAll(async () => {
    gateway = await startGateway();
    token = (await gateway.createInstance('quick-replies')).token;
    otherToken = (await gateway.createInstance('other')).token;
  });

  afterAll(async () => {
    await gateway?.close();
  });

  describe('every kind is stored as its send endpoint’s body, without number and the send-control fields', () => {
    it('should store a text reply (placeholders kept as written) with the seed record', async () => {
      const reply = await create({
        shortCut: 'oi',
        message: {
          kind: 'text',
          text: 'Olá {{first_name}}!',
          linkPreview: true,
          number: '5511999999999',
          delay: 1000,
          readchat: true,
          async: true,
          track_id: 'x',
        },
      });
      expect(reply).toEqual({
        id: expect.stringMatching(/^r[0-9a-f]{14}$/),
        shortCut: 'oi',
        aiDescription: '',
        onWhatsApp: false,
        message: { kind: 'text', text: 'Olá {{first_name}}!', linkPreview: true },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        // The reference's flat fields beside it (the instance is not paired: no owner yet).
        type: 'text',
        text: 'Olá {{first_name}}!',
        file: '',
        docName: '',
        owner: '',
        created: reply.createdAt,
        updated: reply.updatedAt,
      });
      expect(new Date(reply.createdAt).toISOString()).toBe(reply.createdAt);
      expect(await gateway.call('GET', `/quick-replies/${reply.id}`, { token })).toEqual({ status: 200, body: reply });
    });

    it('should store a media reply given by URL as sent, and keep aiDescription', async () => {
      const reply = await create({
        shortCut: 'catalogo',
        aiDescription: 'the catalogue',
        message: {
          kind: 'media',
          type: 'document',
          file: 'https://example.com/catalogo.pdf',
          docName: 'catalogo.pdf',
          text: 'Nosso catálogo',
          replyid: 'abc',
          mentions: 'all',
        },
      });
      expect(reply).toMatchObject({
        aiDescription: 'the catalogue',
        message: { kind: 'media', type: 'document', file: 'https://example.com/catalogo.pdf', docName: 'catalogo.pdf', text: 'Nosso catálogo' },
      });
      expect(reply.message).not.toHaveProperty('replyid');
      expect(reply.message).not.toHaveProperty('mentions');
      expect(reply).toMatchObject({ type: 'document', text: 'Nosso catálogo', file: 'https://example.com/catalogo.pdf', docName: 'catalogo.pdf' });
    });

    it('should store a base64 file in the file store and show where /files serves it', async () => {
      const bytes = png(1000);
      const reply = await create({ shortCut: 'logo', message: { kind: 'media', type: 'image', file: bytes.toString('base64'), text: 'logo' } });
      expect(reply.message).toEqual({ kind: 'media', type: 'image', text: 'logo', file: expect.stringMatching(/\/files\/[0-9a-f]{32}$/) });
      const served = await fetch(new URL(new URL(reply.message.file).pathname, gateway.baseUrl));
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toContain('image/png');
      expect(Buffer.from(await served.arrayBuffer()).equals(bytes)).toBe(true);
    });

    it('should store a contact, a location, each menu type and a PIX button', async () => {
      const contact = await create({
        shortCut: 'vcard',
        message: { kind: 'contact', fullName: 'Ana', phoneNumber: '5511988887777', organization: 'Loja', number: '1' },
      });
      expect(contact.message).toEqual({ kind: 'contact', fullName: 'Ana', phoneNumber: '5511988887777', organization: 'Loja' });
      const location = await create({
        shortCut: 'loja',
        message: { kind: 'location', latitude: -23.5505, longitude: '-46.6333', name: 'Loja', address: 'Av. Paulista' },
      });
      expect(location.message).toEqual({ kind: 'location', latitude: -23.5505, longitude: '-46.6333', name: 'Loja', address: 'Av. Paulista' });
      const poll = await create({ shortCut: 'enquete', message: { kind: 'menu', type: 'poll', text: 'Qual?', choices: ['A', 'B'], selectableCount: 1 } });
      expect(poll.message).toEqual({ kind: 'menu', type: 'poll', text: 'Qual?', choices: ['A', 'B'], selectableCount: 1 });
      const list = await create({
        shortCut: 'lista',
        message: { kind: 'menu', type: 'list', text: 'Menu', listButton: 'Ver', choices: ['[Pratos]', 'Pizza|p1|grande'] },
      });
      expect(list.message).toMatchObject({ kind: 'menu', type: 'list', choices: ['[Pratos]', 'Pizza|p1|grande'] });
      const buttons = await create({
        shortCut: 'botoes',
        message: {
          kind: 'menu',
          type: 'button',
          text: 'Escolha',
          choices: ['Sim|yes', 'Site|https://example.com'],
          footerText: 'rodapé',
          imageButton: 'https://example.com/a.jpg',
        },
      });
      expect(buttons.message).toMatchObject({ kind: 'menu', type: 'button', imageButton: 'https://example.com/a.jpg' });
      const legacy = await create({ shortCut: 'legado', message: { kind: 'menu', type: 'button_legacy', text: 'Escolha', choices: ['Sim|yes', 'Não|no'] } });
      expect(legacy.message.type).toBe('button_legacy');
      const pix = await create({ shortCut: 'pix', message: { kind: 'pix', pixType: 'evp', pixKey: '123e4567-e89b-12d3-a456-426614174000', pixName: 'Loja' } });
      expect(pix.message).toEqual({ kind: 'pix', pixType: 'EVP', pixKey: '123e4567-e89b-12d3-a456-426614174000', pixName: 'Loja' });
    });

    it('should take uazapi’s flat form (type, text, file, docName) as a text or media message', async () => {
      const text = await create({ shortCut: 'flat', type: 'text', text: 'Oi!' });
      expect(text.message).toEqual({ kind: 'text', text: 'Oi!' });
      expect(text).toMatchObject({ type: 'text', text: 'Oi!', file: '', docName: '' });
      const audio = await create({ shortCut: 'flat-audio', type: 'ptt', file: 'https://example.com/a.ogg' });
      expect(audio.message).toEqual({ kind: 'media', type: 'ptt', file: 'https://example.com/a.ogg' });
      // Read back in the same flat form.
      expect(audio).toMatchObject({ type: 'ptt', text: '', file: 'https://example.com/a.ogg', docName: '' });
      await refused({ shortCut: 'flat', type: 'text' }, 'missing number or text');
      await refused({ shortCut: 'flat', type: 'image' }, 'missing file (a URL or base64)');
    });
  });

  describe('bad input is a 400 {error, code: validation_failed}', () => {
    it('should refuse what each kind’s send endpoint refuses', async () => {
      await refused({ message: { kind: 'text', text: 'x' } }, 'missing shortCut');
      await refused({ shortCut: 'x' }, /^missing message/);
      await refused({ shortCut: 'x', message: { kind: 'sticker' } }, /^message.kind must be one of text, media, contact, location, menu, pix/);
      await refused({ shortCut: 'x', message: 'hello' }, 'message must be an object with a kind');
      await refused({ shortCut: 'x', message: { kind: 'text' } }, /missing number or text/);
      await refused(
        { shortCut: 'x', message: { kind: 'media', type: 'sticker', file: 'https://example.com/a.webp' } },
        /^message.type must be one of image, video, document, audio, ptt, myaudio/,
      );
      await refused({ shortCut: 'x', message: { kind: 'contact', fullName: 'Ana' } }, /missing phoneNumber/);
      await refused({ shortCut: 'x', message: { kind: 'contact', fullName: 'Ana', phoneNumber: 'abc' } }, 'phoneNumber: "abc" is not a phone number');
      await refused({ shortCut: 'x', message: { kind: 'location', latitude: 91, longitude: 0 } }, 'missing required fields or invalid coordinates');
      await refused({ shortCut: 'x', message: { kind: 'pix', pixType: 'IBAN', pixKey: 'k' } }, 'Invalid keyType. Allowed: CPF, CNPJ, PHONE, EMAIL, EVP');
      await refused({ shortCut: 'x', message: { kind: 'pix', pixType: 'EVP' } }, /Missing pixKey or pixCode/);
      await refused({ shortCut: 'x', message: { kind: 'media', type: 'image', file: 'not base64!' } }, 'file must be a URL or base64');
      await refused({ shortCut: 'x', message: { kind: 'media', type: 'image', file: pdf().toString('base64') } }, /^file is not an image/);
    });

    it('should refuse a menu that could not be sent', async () => {
      const menu = (extra: Record<string, unknown>) => ({ shortCut: 'm', message: { kind: 'menu', text: 'Menu', ...extra } });
      await refused(menu({ type: 'poll', choices: ['only'] }), 'a poll needs at least 2 options');
      await refused(menu({ type: 'list', choices: ['[Section]'] }), 'a list needs at least one item (a [section] alone does not count)');
      await refused(menu({ type: 'button', choices: [] }), /missing choices/);
      await refused(menu({ type: 'button', choices: ['  '] }), 'a button menu needs at least 1 button');
      await refused(menu({ type: 'carousel', choices: ['[Card]', 'Buy|buy'] }), /a carousel cannot be a quick reply/);
      await refused(menu({ type: 'button', choices: ['Sim'], imageButton: png().toString('base64') }), /imageButton must be an http\(s\) URL/);
      await refused(menu({ type: 'button_legacy', choices: ['Site|https://example.com'] }), /button_legacy takes reply buttons only/);
    });

    it('should refuse a base64 file over its kind’s limit, naming the limit', async () => {
      await refused(
        { shortCut: 'big', message: { kind: 'media', type: 'image', file: png(5 * MB + 1).toString('base64') } },
        /^file is too large: a quick reply's image may be at most 5 MB/,
      );
      await refused(
        { shortCut: 'big', message: { kind: 'media', type: 'video', file: mp4(16 * MB + 1).toString('base64') } },
        /^file is too large: a quick reply's video may be at most 16 MB/,
      );
      await refused(
        { shortCut: 'big', type: 'document', file: pdf(20 * MB + 1).toString('base64') },
        /^file is too large: a quick reply's document may be at most 20 MB/,
      );
      // At the limit it is stored.
      const image = await create({ shortCut: 'exact', message: { kind: 'media', type: 'image', file: png(5 * MB).toString('base64') } });
      expect(await edit({ id: image.id, delete: true })).toMatchObject({ status: 200 });
    });
  });

  describe('update and delete', () => {
    it('should update a reply in place, keep its stored file when its link is sent back, and delete a replaced file', async () => {
      const reply = await create({ shortCut: 'doc', message: { kind: 'media', type: 'document', file: pdf(2000).toString('base64'), docName: 'a.pdf' } });
      const link = reply.message.file as string;
      const path = new URL(link).pathname;
      const renamed = await edit({ id: reply.id, shortCut: 'doc2', message: { kind: 'media', type: 'document', file: link, docName: 'b.pdf' } });
      expect(renamed).toMatchObject({
        status: 200,
        body: { message: 'Quick reply updated', quickReply: { id: reply.id, shortCut: 'doc2', message: { file: link, docName: 'b.pdf' } } },
      });
      expect(renamed.body.quickReply.createdAt).toBe(reply.createdAt);
      expect(new Date(renamed.body.quickReply.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(reply.updatedAt).getTime());
      expect((await fetch(new URL(path, gateway.baseUrl))).status).toBe(200);

      const asText = await edit({ id: reply.id, shortCut: 'doc2', message: { kind: 'text', text: 'now text' } });
      expect(asText.body.quickReply.message).toEqual({ kind: 'text', text: 'now text' });
      expect((await fetch(new URL(path, gateway.baseUrl))).status).toBe(404);
      expect(await gateway.call('GET', `/quick-replies/${reply.id}`, { token })).toMatchObject({ status: 200, body: { shortCut: 'doc2' } });
    });

    it('should delete a reply and its stored file', async () => {
      const reply = await create({ shortCut: 'bye', message: { kind: 'media', type: 'image', file: `data:image/png;base64,${png(100).toString('base64')}` } });
      const path = new URL(reply.message.file).pathname;
      const deleted = await edit({ id: reply.id, delete: true });
      expect(deleted.status).toBe(200);
      expect(deleted.body.message).toBe('Quick reply deleted');
      expect(deleted.body.quickReplies.map((entry: { id: string }) => entry.id)).not.toContain(reply.id);
      expect(await gateway.call('GET', `/quick-replies/${reply.id}`, { token })).toEqual({
        status: 404,
        body: { error: `Quick reply not found: ${reply.id}`, code: 'not_found' },
      });
      expect((await fetch(new URL(path, gateway.baseUrl))).status).toBe(404);
      expect(await edit({ id: reply.id, delete: true })).toEqual({ status: 404, body: { error: `Quick reply not found: ${reply.id}`, code: 'not_found' } });
      await refused({ delete: true }, /^missing id/);
      expect(await edit({ id: 'r00000000000000', shortCut: 'x', type: 'text', text: 'x' })).toMatchObject({ status: 404, body: { code: 'not_found' } });
    });

    it('should create with an empty id', async () => {
      const reply = await create({ id: '', shortCut: 'empty-id', type: 'text', text: 'hi' });
      expect(reply.id).toMatch(/^r[0-9a-f]{14}$/);
    });
  });

  describe('listing, error shapes and isolation', () => {
    it('should list the instance’s replies oldest first, the same records GET answers', async () => {
      const { status, body } = await gateway.call('GET', '/quickreply/showall', { token });
      expect(status).toBe(200);
      expect(body.length).toBeGreaterThan(5);
      expect(body.map((entry: { createdAt: string }) => entry.createdAt)).toEqual([...body.map((entry: { createdAt: string }) => entry.createdAt)].sort());
      expect((await gateway.call('GET', `/quick-replies/${body[0].id}`, { token })).body).toEqual(body[0]);
    });

    it('should answer hostile bodies with a 4xx, never a 5xx', async () => {
      const bodies: unknown[] = [
        [],
        'text',
        { shortCut: 'x', message: [] },
        { shortCut: 'x', message: [{ kind: 'text', text: 'x' }] },
        { shortCut: 'x', message: { kind: null } },
        { shortCut: 'x', message: { kind: { $gt: '' } } },
        { shortCut: 'x', message: { kind: 'menu', type: 'poll', text: 'x', choices: 'a,b' } },
        { shortCut: 'x', message: { kind: 'menu', type: 'poll', text: 'x', choices: ['a', 'b'], selectableCount: 5 } },
        { shortCut: 'x', message: { kind: 'menu', type: 'poll', text: 'x', choices: ['a', 'a'] } },
        { shortCut: 'x', message: { kind: 'location', latitude: { a: 1 }, longitude: [1] } },
        { shortCut: 'x', message: { kind: 'media', type: 'image', file: 'data:image/png;base64,' } },
        { shortCut: 'x', message: { kind: 'media', type: 'document', file: '   ' } },
        { shortCut: 123, message: { kind: 'text', text: 'x' } },
        { id: 5, shortCut: 'x', type: 'text', text: 'x' },
        { id: 'x'.repeat(101), shortCut: 'x', type: 'text', text: 'x' },
        { delete: 'yes', id: 'r1' },
        { shortCut: 'x', type: 'sticker', file: 'https://example.com/a.webp' },
        { shortCut: 'x', aiDescription: 7, type: 'text', text: 'x' },
      ];
      for (const body of bodies) {
        const response = await edit(body);
        expect({ body, status: response.status }).toEqual({ body, status: response.status < 500 && response.status >= 400 ? response.status : 'not a 4xx' });
        expect({ body, code: response.body.code }).toEqual({ body, code: expect.any(String) });
      }
      // A null message is absent: the flat form is read.
      expect((await edit({ shortCut: 'x', message: null, type: 'text', text: 'null message' })).status).toBe(200);
      expect((await gateway.call('GET', `/quick-replies/${'%27%22'.repeat(10)}`, { token })).status).toBe(404);
    });

    it('should answer a missing or wrong token with {code: 401, message, data} on GET /quick-replies/{id} only', async () => {
      const expected = { status: 401, body: { code: 401, message: 'Invalid token', data: {} } };
      expect(await gateway.call('GET', '/quick-replies/r123')).toEqual(expected);
      expect(await gateway.call('GET', '/quick-replies/r123', { token: 'wrong' })).toEqual(expected);
      expect(await gateway.call('GET', '/quickreply/showall', { token: 'wrong' })).toEqual({ status: 401, body: { error: 'Invalid token' } });
      expect(await gateway.call('POST', '/quickreply/edit', { body: {} })).toEqual({ status: 401, body: { error: 'Invalid token' } });
      // Other routes keep their bodies.
      expect(await gateway.call('GET', '/labels', { token: 'wrong' })).toEqual({ status: 401, body: { error: 'Invalid token' } });
      expect(await gateway.call('POST', '/send/text', { token, body: {} })).toEqual({ status: 400, body: { error: 'missing number or text' } });
    });

    it('should never show, change or delete another instance’s replies', async () => {
      const mine = await create({ shortCut: 'mine', type: 'text', text: 'private' });
      const theirs = await create({ shortCut: 'theirs', type: 'text', text: 'other' }, otherToken);
      expect(await gateway.call('GET', `/quick-replies/${mine.id}`, { token: otherToken })).toEqual({
        status: 404,
        body: { error: `Quick reply not found: ${mine.id}`, code: 'not_found' },
      });
      expect(await edit({ id: mine.id, shortCut: 'stolen', type: 'text', text: 'x' }, otherToken)).toMatchObject({ status: 404 });
      expect(await edit({ id: mine.id, delete: true }, otherToken)).toMatchObject({ status: 404 });
      expect((await gateway.call('GET', `/quick-replies/${mine.id}`, { token })).body).toEqual(mine);
      const listed = await gateway.call('GET', '/quickreply/showall', { token: otherToken });
      expect(listed.body.map((entry: { id: string }) => entry.id)).toEqual([theirs.id]);
    });

    it('should hold an instance’s stored files to 50 MB, whoever else stores what', async () => {
      const { token: fresh } = await gateway.createInstance('limits');
      const doc = () => ({ shortCut: 'doc', message: { kind: 'media', type: 'document', file: pdf(20 * MB).toString('base64') } });
      const first = await create(doc(), fresh);
      await create(doc(), fresh);
      // The other instance's files do not count against this one.
      await create({ shortCut: 'video', message: { kind: 'media', type: 'video', file: mp4(9 * MB).toString('base64') } }, otherToken);
      const third = await edit(doc(), fresh);
      expect(third).toEqual({
        status: 400,
        body: {
          error: expect.stringMatching(/^file is too large: an instance's quick replies may store at most 50 MB of files \(40 MB stored, this one is 20 MB\)/),
          code: 'validation_failed',
        },
      });
      // A URL needs no room; replacing a stored file with a smaller one frees room.
      await create({ shortCut: 'url', message: { kind: 'media', type: 'document', file: 'https://example.com/big.pdf' } }, fresh);
      expect(
        await edit({ id: first.id, shortCut: 'doc', message: { kind: 'media', type: 'video', file: mp4(9 * MB).toString('base64') } }, fresh),
      ).toMatchObject({ status: 200 });
      await create({ shortCut: 'video', message: { kind: 'media', type: 'video', file: mp4(9 * MB).toString('base64') } }, fresh);
    }, 60_000);
  });
});
