import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { nextPhone, Stack, waitFor } from './support/stack';

/**
 * `/profile/name` and `/profile/image` through HTTP with real Baileys against the simulator: WhatsApp
 * (the simulator) keeps the push name and the picture, another instance (another Baileys client) sees
 * them, and the instance record follows.
 */
describe('profile (HTTP → worker → Baileys → WhatsApp → another Baileys client)', () => {
  const stack = new Stack();
  let me: { id: string; token: string; phone: string };
  let other: { id: string; token: string; phone: string };
  let server: Server;
  let pictureUrl: string;

  const call = (path: string, body: unknown, token = me.token) => stack.gw.call('POST', path, { token, body });
  const account = () => stack.control<{ name: string }>('GET', `/sim/accounts/${me.phone}`);
  const instance = async () => (await stack.gw.call('GET', '/instance/status', { token: me.token })).body.instance as Record<string, unknown>;
  /** My chat as the other instance stores it. */
  const theirChat = async () =>
    ((await call('/chat/find', { wa_chatid: `${me.phone}@s.whatsapp.net` }, other.token)).body.chats as Array<Record<string, unknown>>)[0];
  const storedPicture = async () => {
    const response = await fetch(`${stack.sim.controlUrl}/sim/accounts/${me.phone}/picture`);
    return response.status === 200 ? Buffer.from(await response.arrayBuffer()) : null;
  };

  beforeAll(async () => {
    await stack.start();
    me = await stack.connectedInstance('profile-me');
    other = await stack.connectedInstance('profile-other');
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: { r: 0, g: 128, b: 255 } } })
      .png()
      .toBuffer();
    server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'image/png' }).end(png));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    pictureUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/logo.png`;
    // The two talk, so WhatsApp tells the other of my picture changes.
    await call('/send/text', { number: other.phone, text: 'olá' });
    await waitFor(
      () => theirChat(),
      (chat) => Boolean(chat),
      20_000,
      'my chat at the other instance',
    );
  }, 120_000);
  afterAll(async () => {
    server?.close();
    await stack.stop();
  });

  describe('POST /profile/name', () => {
    it('should set the push name on WhatsApp, the instance record following, and the other instance sees it on my messages', async () => {
      const { status, body } = await call('/profile/name', { name: 'Loja Nova' });
      expect(status).toBe(200);
      expect(body).toEqual({ success: true, message: 'Profile name updated successfully', profile: { name: 'Loja Nova', updated_at: expect.any(Number) } });
      expect(Math.abs(body.profile.updated_at - Date.now() / 1000)).toBeLessThan(60);
      await waitFor(
        () => account(),
        (found) => found.name === 'Loja Nova',
        5_000,
        'the name WhatsApp keeps',
      );
      expect(await instance()).toMatchObject({ profileName: 'Loja Nova' });
      // The app-state patch, as WhatsApp's apps write it.
      const state = await stack.control<Record<string, { mutations: Array<{ index: unknown; action: Record<string, any> }> }>>(
        'GET',
        `/sim/accounts/${me.phone}/app-state`,
      );
      expect(state.critical_block.mutations.at(-1)?.action.pushNameSetting).toEqual({ name: 'Loja Nova' });

      await call('/send/text', { number: other.phone, text: 'com nome novo' });
      await waitFor(
        () => theirChat(),
        (chat) => chat.wa_name === 'Loja Nova',
        15_000,
        'my new name at the other instance',
      );
    });

    it('should refuse a missing, empty or too long name', async () => {
      expect(await call('/profile/name', {})).toEqual({ status: 400, body: { error: 'name is required' } });
      expect(await call('/profile/name', { name: '   ' })).toEqual({ status: 400, body: { error: 'name must not be empty' } });
      expect(await call('/profile/name', { name: 'x'.repeat(26) })).toEqual({ status: 400, body: { error: 'name must be at most 25 characters' } });
      expect(await call('/profile/name', { name: 7 })).toEqual({ status: 400, body: { error: 'name must be a string' } });
      expect((await account()).name).toBe('Loja Nova');
    });
  });

  describe('POST /profile/image', () => {
    it('should set the picture from base64: WhatsApp keeps a 640×640 JPEG, the instance and the other instance get its URL', async () => {
      const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 255, g: 0, b: 0 } } })
        .png()
        .toBuffer();
      const { status, body } = await call('/profile/image', { image: `data:image/png;base64,${png.toString('base64')}` });
      expect(status).toBe(200);
      expect(body).toEqual({
        success: true,
        message: 'Profile image updated successfully',
        profile: { image_updated: true, image_removed: false, updated_at: expect.any(Number) },
      });
      const stored = await storedPicture();
      expect(stored?.subarray(0, 2).toString('hex')).toBe('ffd8');
      expect(await sharp(stored!).metadata()).toMatchObject({ format: 'jpeg', width: 640, height: 640 });
      const { profilePicUrl } = await instance();
      expect(profilePicUrl).toMatch(new RegExp(`^https://pps\\.whatsapp\\.net/.*${me.phone}_\\d+_image\\.jpg$`));
      const chat = await waitFor(
        () => theirChat(),
        (found) => found.image === profilePicUrl,
        15_000,
        'my picture at the other instance',
      );
      expect(chat.imagePreview).toBe(String(profilePicUrl).replace('_image.jpg', '_preview.jpg'));
    });

    it('should answer the picture WhatsApp serves now in /chat/details, of the size asked for', async () => {
      const { profilePicUrl } = await instance();
      const details = await call('/chat/details', { number: me.phone }, other.token);
      expect(details.status).toBe(200);
      expect(details.body.image).toBe(profilePicUrl);
      const preview = await call('/chat/details', { number: me.phone, preview: true }, other.token);
      expect(preview.body.imagePreview).toBe(String(profilePicUrl).replace('_image.jpg', '_preview.jpg'));
    });

    it('should set the picture from a URL', async () => {
      const before = (await instance()).profilePicUrl;
      expect((await call('/profile/image', { image: pictureUrl })).body.profile).toMatchObject({ image_updated: true, image_removed: false });
      const after = (await instance()).profilePicUrl;
      expect(after).not.toBe(before);
      expect(after).toMatch(/_image\.jpg$/);
    });

    it('should remove the picture: WhatsApp has none, the instance and the other instance follow', async () => {
      const { status, body } = await call('/profile/image', { image: 'remove' });
      expect(status).toBe(200);
      expect(body).toMatchObject({ message: 'Profile image removed successfully', profile: { image_updated: false, image_removed: true } });
      expect(await storedPicture()).toBeNull();
      expect(await instance()).toMatchObject({ profilePicUrl: '' });
      await waitFor(
        () => theirChat(),
        (chat) => chat.image === '' && chat.imagePreview === '',
        15_000,
        'my picture gone at the other instance',
      );
      expect((await call('/chat/details', { number: me.phone }, other.token)).body.image).toBe('');
      expect((await call('/profile/image', { image: 'delete' })).status).toBe(200);
    });

    it('should follow a picture the phone sets or removes, and read it at login', async () => {
      const jpeg = await sharp({ create: { width: 640, height: 640, channels: 3, background: { r: 0, g: 200, b: 0 } } })
        .jpeg()
        .toBuffer();
      const { id } = await stack.control<{ id: string }>('POST', `/sim/accounts/${me.phone}/picture`, { jpeg: jpeg.toString('base64') });
      await waitFor(
        () => instance(),
        (found) => String(found.profilePicUrl).includes(`_${id}_image.jpg`),
        10_000,
        'the phone’s picture on the instance',
      );
      await stack.control('POST', `/sim/accounts/${me.phone}/picture`, {});
      await waitFor(
        () => instance(),
        (found) => found.profilePicUrl === '',
        10_000,
        'no picture on the instance',
      );

      // An account that has a picture before it is linked: the instance shows it once connected.
      const phone = nextPhone('5589');
      await stack.control('POST', '/sim/accounts', { phone, name: 'Com foto' });
      const set = await stack.control<{ id: string }>('POST', `/sim/accounts/${phone}/picture`, { jpeg: jpeg.toString('base64') });
      const { token } = await stack.gw.createInstance('profile-later');
      const connect = await stack.gw.call('POST', '/instance/connect', { token, body: {} });
      await stack.control('POST', '/sim/scan', { phone, qr: connect.body.instance.qrcode });
      const linked = await waitFor(
        async () => (await stack.gw.call('GET', '/instance/status', { token })).body,
        (body) => body.status?.connected === true && String(body.instance?.profilePicUrl).includes(`_${set.id}_image.jpg`),
        20_000,
        'the picture of a newly linked account',
      );
      expect(linked.instance.profilePicUrl).toMatch(/^https:\/\/pps\.whatsapp\.net\//);
    });

    it('should refuse what is no picture, and no image at all', async () => {
      expect(await call('/profile/image', {})).toEqual({ status: 400, body: { error: 'image is required' } });
      expect(await call('/profile/image', { image: 12 })).toEqual({ status: 400, body: { error: 'image must be a string' } });
      expect((await call('/profile/image', { image: Buffer.from('just some text, no picture').toString('base64') })).status).toBe(400);
      expect((await call('/profile/image', { image: 'not base64 at all!' })).status).toBe(400);
      expect((await call('/profile/image', { image: 'http://169.254.169.254/latest/meta-data' })).status).toBe(400);
      expect(await storedPicture()).toBeNull();
    });
  });
});
