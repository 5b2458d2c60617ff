import sharp from 'sharp';
import { startFilesServer, type FilesServer } from './support/files-server';
import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * What published uazapi clients send beyond the spec (issue 36): routes no spec version lists
 * (`GET /group/invitelink/{groupJid}`, `POST /chat/GetNameAndImageURL`, `GET /status`), field aliases
 * (`caption`, `buttonText`) and a nested message on `/sender/simple`. HTTP → worker → Baileys → simulator.
 */
describe('what published uazapi clients send (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let token: string;
  let owner: string;
  let friend: string;
  let files: FilesServer;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const answer = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const { status, body: answered } = await call(method, path, body);
    return { status, body: answered };
  };

  beforeAll(async () => {
    await stack.start();
    ({ token, phone: owner } = await stack.connectedInstance('client-compat'));
    friend = nextPhone('5587');
    await stack.control('POST', '/sim/accounts', { phone: friend, name: 'Friend Compat' });
    files = await startFilesServer();
  }, 60_000);
  afterAll(async () => {
    await files?.close();
    await stack.stop();
  });

  describe('GET /group/invitelink/{groupJid} (uazapi 2.0)', () => {
    it("should answer an admin the group's current invite link", async () => {
      const created = await call('POST', '/group/create', { name: 'Invite compat', participants: [friend] });
      expect(created.status).toBe(200);
      const jid = created.body.JID as string;
      const { inviteCode } = await stack.control<{ inviteCode: string }>('GET', `/sim/groups/${encodeURIComponent(jid)}`);
      expect(await answer('GET', `/group/invitelink/${jid}`)).toEqual({ status: 200, body: { inviteLink: `https://chat.whatsapp.com/${inviteCode}` } });
      // The id without @g.us, as /group/info takes it.
      expect((await call('GET', `/group/invitelink/${jid.replace('@g.us', '')}`)).body).toEqual({ inviteLink: `https://chat.whatsapp.com/${inviteCode}` });
    });

    it('should refuse a member that is no admin (403), an unknown group (404) and a bad id (400)', async () => {
      const theirs = await stack.control<{ jid: string }>('POST', '/sim/groups', { creator: friend, subject: 'Their compat group', participants: [owner] });
      expect(await answer('GET', `/group/invitelink/${theirs.jid}`)).toEqual({
        status: 403,
        body: { error: 'Only an admin of this group can read its invite link' },
      });
      expect((await call('GET', '/group/invitelink/120363000000000077@g.us')).status).toBe(404);
      expect(await answer('GET', '/group/invitelink/nope')).toEqual({ status: 400, body: { error: 'groupjid must be a group JID (digits@g.us)' } });
    });
  });

  describe('POST /chat/GetNameAndImageURL (uazapi 2.0)', () => {
    it('should answer the names and the picture /chat/details knows, of the size asked for', async () => {
      const jpeg = await sharp({ create: { width: 640, height: 640, channels: 3, background: { r: 0, g: 0, b: 200 } } })
        .jpeg()
        .toBuffer();
      const { id: pictureId } = await stack.control<{ id: string }>('POST', `/sim/accounts/${friend}/picture`, { jpeg: jpeg.toString('base64') });
      await stack.control('POST', `/sim/accounts/${friend}/send`, { to: owner, text: 'oi, compat' });
      await call('POST', '/contact/add', { number: friend, name: 'Ana Compat' });
      const full = await waitFor(
        () => answer('POST', '/chat/GetNameAndImageURL', { number: friend, returnMoreNames: true }),
        (reply) => reply.status === 200 && reply.body.wa_contactName === 'Ana Compat',
        15_000,
        'the chat stored with its contact name',
      );
      expect(full.body).toEqual({
        name: 'Ana Compat',
        wa_name: 'Friend Compat',
        wa_contactName: 'Ana Compat',
        image: expect.stringContaining(`_${pictureId}_image.jpg`),
        imagePreview: expect.any(String),
      });
      const preview = await answer('POST', '/chat/GetNameAndImageURL', { number: `${friend}@s.whatsapp.net`, preview: true });
      expect(preview.body).toMatchObject({ name: 'Ana Compat', imagePreview: expect.stringContaining(`_${pictureId}_preview.jpg`) });
    });

    it('should answer a number without a chat its picture and no names, and refuse a bad number', async () => {
      const stranger = nextPhone('5588');
      await stack.control('POST', '/sim/accounts', { phone: stranger, name: 'Stranger Compat' });
      const jpeg = await sharp({ create: { width: 320, height: 320, channels: 3, background: { r: 200, g: 0, b: 0 } } })
        .jpeg()
        .toBuffer();
      const { id } = await stack.control<{ id: string }>('POST', `/sim/accounts/${stranger}/picture`, { jpeg: jpeg.toString('base64') });
      expect(await answer('POST', '/chat/GetNameAndImageURL', { number: stranger })).toEqual({
        status: 200,
        body: { name: '', wa_name: '', wa_contactName: '', image: expect.stringContaining(`_${id}_image.jpg`), imagePreview: '' },
      });
      // Nothing is stored for it.
      expect((await call('POST', '/chat/details', { number: stranger })).status).toBe(404);
      expect(await answer('POST', '/chat/GetNameAndImageURL', { number: 'nope' })).toEqual({ status: 400, body: { error: 'Invalid number' } });
      expect(await answer('POST', '/chat/GetNameAndImageURL', {})).toEqual({ status: 400, body: { error: 'number is required' } });
      expect((await call('POST', '/chat/GetNameAndImageURL', { number: stranger, returnMoreNames: 'yes' })).status).toBe(400);
    });
  });

  describe('GET /status (an n8n node’s credential test)', () => {
    it('should answer the instance’s status with the instance token, as /instance/status does', async () => {
      const status = await answer('GET', '/status');
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ instance: { name: 'client-compat', status: 'connected' }, status: { connected: true, loggedIn: true } });
      expect(status.body.instance.id).toBe((await call('GET', '/instance/status')).body.instance.id);
      expect((await fetch(`${stack.gw.baseUrl}/status?token=${token}`)).status).toBe(200);
      expect((await stack.gw.call('GET', '/status', { token: 'wrong' })).status).toBe(401);
      expect((await stack.gw.call('GET', '/status', { admin: stack.gw.adminToken })).status).toBe(401);
    });
  });

  describe('field aliases', () => {
    it('should send `caption` as the caption of /send/media when `text` is absent', async () => {
      const sent = await call('POST', '/send/media', { number: friend, type: 'image', file: `${files.url}/pic.png`, caption: 'the caption' });
      expect(sent.status).toBe(200);
      expect(sent.body.text).toBe('the caption');
      expect((await stack.received(friend, sent.body.messageid)).message.imageMessage).toMatchObject({ caption: 'the caption' });
      // `text` wins when both are sent.
      const both = await call('POST', '/send/media', { number: friend, type: 'image', file: `${files.url}/pic.png`, text: 'text', caption: 'caption' });
      expect((await stack.received(friend, both.body.messageid)).message.imageMessage).toMatchObject({ caption: 'text' });
    });

    it('should take `buttonText` for `listButton` on /send/menu', async () => {
      const sent = await call('POST', '/send/menu', { number: friend, type: 'list', text: 'Menu', buttonText: 'Open', choices: ['[Drinks]', 'Coffee|c1'] });
      expect(sent.status).toBe(200);
      expect((await stack.received(friend, sent.body.messageid)).message.listMessage).toMatchObject({ buttonText: 'Open' });
    });
  });

  describe('/sender/simple with a nested message', () => {
    it('should name what to send instead of `numbers[0]: type is required`', async () => {
      const refused = await answer('POST', '/sender/simple', { numbers: [friend], message: { type: 'text', text: 'hi' }, delayMin: 1, delayMax: 2 });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/^message: \/sender\/simple takes the message’s fields at the top level of the body, beside numbers/);
      expect(refused.body.error).toContain('"type": "text"');
    });
  });
});
