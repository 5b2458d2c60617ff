import { createServer, type Server } from 'http';
import type { AddressInfo } from 'net';
import sharp from 'sharp';
import { nextPhone, Stack, waitFor } from './support/stack';

interface SimPost {
  serverId: number;
  id: string;
  message: Record<string, any>;
  reactions: Record<string, number>;
  views: number;
  edited: boolean;
}

interface SimNewsletter {
  jid: string;
  name: string;
  owner: string;
  admins: string[];
  adminInvites: string[];
  picture: { id: string; bytes: number } | null;
  reactionCodes: string;
  followers: Array<{ phone: string; muted: boolean }>;
  posts: SimPost[];
}

/**
 * The channel routes beyond create/read/follow: live updates, post edits and deletions, views, reactions, picture,
 * settings, the directory, admins and ownership. Through HTTP, real Baileys against the simulator's channels.
 */
describe('newsletter management API (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let token: string;
  let phone: string;
  let publisher: string;
  let friend: string;
  let images: Server;
  let imageUrl: string;
  let png: Buffer;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const simChannel = (jid: string) => stack.control<SimNewsletter>('GET', `/sim/newsletters/${encodeURIComponent(jid)}`);
  const othersChannel = (name: string, followers: string[] = []) =>
    stack.control<SimNewsletter>('POST', '/sim/newsletters', { owner: publisher, name, description: 'de outro', followers });
  const post = (jid: string, text: string) =>
    stack.control<{ id: string; serverId: number }>('POST', `/sim/newsletters/${encodeURIComponent(jid)}/posts`, { text });
  const myChannel = async (name: string) => (await call('POST', '/newsletter/create', { name })).body.response.id as string;
  const missing = '120363999999999999@newsletter';
  const events = (jid: string) =>
    stack.db.dataSource
      .query(`SELECT payload FROM outbox_events WHERE event_type = 'newsletter_messages' AND chat_id = $1 ORDER BY id`, [jid])
      .then((rows: Array<{ payload: Record<string, any> }>) => rows.map((row) => row.payload));

  beforeAll(async () => {
    png = await sharp({ create: { width: 900, height: 700, channels: 3, background: '#2266aa' } })
      .png()
      .toBuffer();
    images = createServer((req, res) => {
      if (req.url === '/logo.png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(png);
      } else if (req.url === '/not-an-image') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('hello');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    imageUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
    await stack.start();
    ({ token, phone } = await stack.connectedInstance('newsletters-manage'));
    publisher = nextPhone('5597');
    friend = nextPhone('5596');
    await stack.control('POST', '/sim/accounts', { phone: publisher, name: 'Publisher' });
    await stack.control('POST', '/sim/accounts', { phone: friend, name: 'Friend' });
  }, 60_000);
  afterAll(async () => {
    await stack.stop();
    await new Promise((resolve) => images.close(resolve));
  });

  describe('POST /newsletter/subscribe', () => {
    it('should answer how long live updates last, as a Go duration', async () => {
      const channel = await othersChannel('Ao vivo', [phone]);
      expect(await call('POST', '/newsletter/subscribe', { jid: channel.jid })).toEqual({ status: 200, body: { response: '5m0s' } });
      expect((await call('POST', '/newsletter/subscribe', { jid: missing })).status).toBe(404);
      expect(await call('POST', '/newsletter/subscribe', { id: 'abc' })).toEqual({ status: 400, body: { error: 'invalid newsletter id' } });
    });
  });

  describe('POST /newsletter/messages/edit and /messages/delete', () => {
    it('should edit the caption of an image post in the form whatsmeow sends (type text, mediatype image), which the simulator checks', async () => {
      const jid = await myChannel('Fotos');
      await stack.control('POST', `/sim/newsletters/${encodeURIComponent(jid)}/posts`, {
        message: { imageMessage: { url: 'https://x/y.jpg', mimetype: 'image/jpeg', caption: 'antes' } },
      });
      const [photo] = (await simChannel(jid)).posts;
      const edited = await call('POST', '/newsletter/messages/edit', { jid, serverid: photo.serverId, text: 'depois' });
      expect(edited.status).toBe(200);
      expect((await simChannel(jid)).posts[0]).toMatchObject({ edited: true, message: { imageMessage: { caption: 'depois', mimetype: 'image/jpeg' } } });
    });

    it('should edit a post by message id and delete one by server id, and followers see newsletter_messages events', async () => {
      const jid = await myChannel('Edições');
      const sent = await call('POST', '/send/text', { number: jid, text: 'Primeira versão' });
      expect(sent.status).toBe(200);
      const second = await call('POST', '/send/text', { number: jid, text: 'Vai ser apagado' });
      const channel = await waitFor(
        () => simChannel(jid),
        (found) => found.posts.length === 2,
        10_000,
        'both posts',
      );
      const [first, doomed] = channel.posts;
      expect(first.id).toBe(sent.body.messageid);

      const edited = await call('POST', '/newsletter/messages/edit', { jid, messageid: first.id, text: 'Versão corrigida' });
      expect(edited).toEqual({
        status: 200,
        body: { response: { jid, targetmessageid: first.id, targetserverid: first.serverId, messageid: first.id, serverid: first.serverId } },
      });
      const deleted = await call('POST', '/newsletter/messages/delete', { id: jid.replace('@newsletter', ''), serverid: doomed.serverId });
      expect(deleted.status).toBe(200);
      expect(deleted.body.response).toMatchObject({ jid, targetmessageid: second.body.messageid, targetserverid: doomed.serverId });

      const after = await simChannel(jid);
      expect(after.posts.map((entry) => entry.serverId)).toEqual([first.serverId]);
      expect(after.posts[0]).toMatchObject({ edited: true, message: { extendedTextMessage: { text: 'Versão corrigida' } } });
      const listed = await call('POST', '/newsletter/messages', { jid });
      expect(listed.body.response).toEqual([
        expect.objectContaining({ serverid: first.serverId, message: { extendedTextMessage: expect.objectContaining({ text: 'Versão corrigida' }) } }),
      ]);

      // The owner's own device hears the edit and the deletion back: each is a newsletter_messages event.
      const seen = await waitFor(
        () => events(jid),
        (list) => list.some((entry) => entry.edit === 'edited') && list.some((entry) => entry.edit === 'deleted'),
        15_000,
        'edit and delete events',
      );
      expect(seen.find((entry) => entry.edit === 'edited')).toMatchObject({
        EventType: 'newsletter_messages',
        newsletter: jid,
        server_id: String(first.serverId),
        message: { messageid: first.id, text: 'Versão corrigida' },
      });
      expect(seen.find((entry) => entry.edit === 'deleted')).toMatchObject({
        newsletter: jid,
        server_id: String(doomed.serverId),
        message: { messageid: doomed.id },
      });
    }, 60_000);

    it('should announce the owner phone edits and deletions of posts of a followed channel', async () => {
      const channel = await othersChannel('Seguido', [phone]);
      const kept = await post(channel.jid, 'Original');
      const gone = await post(channel.jid, 'Some');
      await waitFor(
        () => events(channel.jid),
        (list) => list.length === 2,
        15_000,
        'both posts',
      );
      const path = `/sim/newsletters/${encodeURIComponent(channel.jid)}/posts`;
      await stack.control('POST', `${path}/${kept.serverId}/edit`, { text: 'Corrigido pelo dono' });
      await stack.control('POST', `${path}/${gone.serverId}/delete`, {});
      const seen = await waitFor(
        () => events(channel.jid),
        (list) => list.some((entry) => entry.edit === 'edited') && list.some((entry) => entry.edit === 'deleted'),
        15_000,
        'edit and delete events of the follower',
      );
      expect(seen.find((entry) => entry.edit === 'edited')).toMatchObject({
        newsletter: channel.jid,
        server_id: String(kept.serverId),
        message: { messageid: kept.id, text: 'Corrigido pelo dono' },
      });
      expect(seen.find((entry) => entry.edit === 'deleted')).toMatchObject({ server_id: String(gone.serverId), message: { messageid: gone.id } });
      const found = await call('POST', '/message/find', { chatid: channel.jid });
      expect(found.body.messages.find((entry: any) => entry.messageid === kept.id)).toMatchObject({ text: 'Corrigido pelo dono' });
    });

    it('should keep an image post and change its caption', async () => {
      const jid = await myChannel('Legendas');
      const image = { url: 'https://mmg.whatsapp.net/v/t62.7118-24/x.enc', mimetype: 'image/jpeg', caption: 'antes', fileLength: '10' };
      await stack.control('POST', `/sim/newsletters/${encodeURIComponent(jid)}/posts`, { message: { imageMessage: image } });
      const [target] = (await simChannel(jid)).posts;
      expect((await call('POST', '/newsletter/messages/edit', { jid, serverid: target.serverId, text: 'depois' })).status).toBe(200);
      expect((await simChannel(jid)).posts[0].message.imageMessage).toMatchObject({ url: image.url, caption: 'depois' });
    });

    it('should answer 400 without a target or text, 404 for a post not in recent history, 403 when not an admin', async () => {
      const jid = await myChannel('Erros');
      expect(await call('POST', '/newsletter/messages/edit', { jid, messageid: 'X1' })).toEqual({ status: 400, body: { error: 'text is required' } });
      expect(await call('POST', '/newsletter/messages/edit', { jid, text: 'x' })).toEqual({
        status: 400,
        body: { error: 'messageid or serverid is required' },
      });
      expect(await call('POST', '/newsletter/messages/delete', { jid })).toEqual({ status: 400, body: { error: 'messageid or serverid is required' } });
      expect(await call('POST', '/newsletter/messages/delete', { jid, serverid: 0 })).toEqual({
        status: 400,
        body: { error: 'serverid must be a positive server id' },
      });
      expect(await call('POST', '/newsletter/messages/delete', { jid, serverid: 999 })).toEqual({
        status: 404,
        body: { error: 'newsletter message not found in recent history' },
      });
      // A sticker cannot be edited.
      await stack.control('POST', `/sim/newsletters/${encodeURIComponent(jid)}/posts`, {
        message: { stickerMessage: { url: 'https://x/y', mimetype: 'image/webp' } },
      });
      const [sticker] = (await simChannel(jid)).posts;
      const refused = await call('POST', '/newsletter/messages/edit', { jid, serverid: sticker.serverId, text: 'x' });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/only text, image, video and document posts/);
      // Someone else's channel: the instance only follows it.
      const theirs = await othersChannel('Alheio', [phone]);
      const theirPost = await post(theirs.jid, 'Deles');
      const denied = await call('POST', '/newsletter/messages/delete', { jid: theirs.jid, serverid: theirPost.serverId });
      expect(denied.status).toBe(403);
      expect((await simChannel(theirs.jid)).posts).toHaveLength(1);
    });
  });

  describe('POST /newsletter/viewed and /newsletter/reaction', () => {
    it('should count the instance view once, and set, change and take back its reaction', async () => {
      const channel = await othersChannel('Reações', [phone]);
      const first = await post(channel.jid, 'Um');
      const second = await post(channel.jid, 'Dois');
      expect(await call('POST', '/newsletter/viewed', { jid: channel.jid, serverids: [first.serverId, second.serverId] })).toEqual({
        status: 200,
        body: { response: true },
      });
      expect((await call('POST', '/newsletter/viewed', { jid: channel.jid, serverids: [first.serverId] })).status).toBe(200);
      expect((await simChannel(channel.jid)).posts.map((entry) => entry.views)).toEqual([1, 1]);

      expect(await call('POST', '/newsletter/reaction', { jid: channel.jid, serverid: first.serverId, reaction: '🔥' })).toEqual({
        status: 200,
        body: { response: true },
      });
      expect((await simChannel(channel.jid)).posts[0].reactions).toEqual({ '🔥': 1 });
      await call('POST', '/newsletter/reaction', { jid: channel.jid, serverid: first.serverId, reaction: '👍', reactionmessageid: '3EB0AABBCCDD' });
      expect((await simChannel(channel.jid)).posts[0].reactions).toEqual({ '👍': 1 });
      const listed = await call('POST', '/newsletter/messages', { jid: channel.jid });
      expect(listed.body.response[0]).toMatchObject({ serverid: first.serverId, viewsCount: 1, reactionCounts: { '👍': 1 } });
      await call('POST', '/newsletter/reaction', { jid: channel.jid, serverid: first.serverId, reaction: '' });
      expect((await simChannel(channel.jid)).posts[0].reactions).toEqual({});
    });

    it('should answer 400 for missing server ids, 404 for a post that does not exist, 403 for a reaction the channel refuses', async () => {
      const channel = await othersChannel('Limites', [phone]);
      await post(channel.jid, 'Post');
      expect(await call('POST', '/newsletter/viewed', { jid: channel.jid })).toEqual({ status: 400, body: { error: 'serverids is required' } });
      expect(await call('POST', '/newsletter/viewed', { jid: channel.jid, serverids: ['a'] })).toEqual({
        status: 400,
        body: { error: 'serverids must be an array of server ids' },
      });
      expect(await call('POST', '/newsletter/reaction', { jid: channel.jid, reaction: '🔥' })).toEqual({
        status: 400,
        body: { error: 'serverid is required' },
      });
      expect((await call('POST', '/newsletter/reaction', { jid: channel.jid, serverid: 9999, reaction: '🔥' })).status).toBe(404);
      // A channel limited to the basic reactions refuses others.
      const jid = await myChannel('Só básicas');
      await call('POST', '/send/text', { number: jid, text: 'Reaja' });
      const [mine] = (
        await waitFor(
          () => simChannel(jid),
          (found) => found.posts.length === 1,
          10_000,
          'the post',
        )
      ).posts;
      expect((await call('POST', '/newsletter/settings', { jid, reactionCodes: 'basic' })).status).toBe(200);
      const refused = await call('POST', '/newsletter/reaction', { jid, serverid: mine.serverId, reaction: '🔥' });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatch(/does not take that reaction/);
      expect((await call('POST', '/newsletter/reaction', { jid, serverid: mine.serverId, reaction: '👍' })).status).toBe(200);
      // Only its owner or admins change a channel's settings.
      expect((await call('POST', '/newsletter/settings', { jid: channel.jid, reactionCodes: 'basic' })).status).toBe(403);
    });
  });

  describe('POST /newsletter/picture and /newsletter/settings', () => {
    it('should set the picture from a URL or base64 and remove it; settings change who may react', async () => {
      const jid = await myChannel('Com foto');
      expect(await call('POST', '/newsletter/picture', { jid, picture: `${imageUrl}/logo.png` })).toEqual({ status: 200, body: { response: true } });
      const withPicture = await simChannel(jid);
      expect(withPicture.picture?.bytes).toBeGreaterThan(0);
      const info = await call('POST', '/newsletter/info', { jid });
      expect(info.body.response.thread_metadata.picture).toMatchObject({ id: withPicture.picture!.id, type: 'IMAGE' });

      const small = await sharp({ create: { width: 100, height: 100, channels: 3, background: '#00ff00' } })
        .jpeg()
        .toBuffer();
      expect((await call('POST', '/newsletter/picture', { jid, picture: `data:image/jpeg;base64,${small.toString('base64')}` })).status).toBe(200);
      expect((await simChannel(jid)).picture?.id).not.toBe(withPicture.picture!.id);
      expect((await call('POST', '/newsletter/picture', { jid, picture: 'remove' })).status).toBe(200);
      expect((await simChannel(jid)).picture).toBeNull();

      expect(await call('POST', '/newsletter/settings', { jid, reactionCodes: 'BASIC' })).toEqual({ status: 200, body: { response: true } });
      expect((await simChannel(jid)).reactionCodes).toBe('BASIC');
      expect((await call('POST', '/newsletter/info', { jid })).body.response.thread_metadata.settings).toEqual({ reaction_codes: { value: 'BASIC' } });
    });

    it('should create a channel with its picture, and create none when the picture is bad', async () => {
      const created = await call('POST', '/newsletter/create', { name: 'Nasce com foto', picture: `${imageUrl}/logo.png` });
      expect(created.status).toBe(200);
      const sim = await simChannel(created.body.response.id);
      expect(sim.picture?.bytes).toBeGreaterThan(0);
      expect(created.body.response.thread_metadata.picture).toMatchObject({ id: sim.picture!.id, type: 'IMAGE' });
      const before = (await call('GET', '/newsletter/list')).body.response.length;
      const refused = await call('POST', '/newsletter/create', { name: 'Foto ruim', picture: `${imageUrl}/not-an-image` });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/picture is not an image/);
      expect((await call('POST', '/newsletter/create', { name: 'Sem remover', picture: 'remove' })).status).toBe(400);
      expect((await call('GET', '/newsletter/list')).body.response).toHaveLength(before);
    });

    it('should refuse what is no image, too large or missing, bad settings, and a channel the instance does not run', async () => {
      const jid = await myChannel('Sem foto');
      expect(await call('POST', '/newsletter/picture', { jid })).toEqual({ status: 400, body: { error: 'picture is required' } });
      expect(await call('POST', '/newsletter/picture', { jid, picture: '  ' })).toEqual({ status: 400, body: { error: 'picture: empty image source' } });
      const text = await call('POST', '/newsletter/picture', { jid, picture: `${imageUrl}/not-an-image` });
      expect(text.status).toBe(400);
      expect(text.body.error).toMatch(/picture is not an image/);
      expect((await call('POST', '/newsletter/picture', { jid, picture: Buffer.from('not an image at all').toString('base64') })).status).toBe(400);
      expect((await call('POST', '/newsletter/picture', { jid, picture: Buffer.alloc(1_200_000, 1).toString('base64') })).status).toBe(413);
      expect(await call('POST', '/newsletter/settings', { jid, reactionCodes: 'some' })).toEqual({ status: 400, body: { error: 'invalid reactionCodes' } });
      expect(await call('POST', '/newsletter/settings', { jid })).toEqual({ status: 400, body: { error: 'reactionCodes is required' } });
      const theirs = await othersChannel('Deles', [phone]);
      expect((await call('POST', '/newsletter/picture', { jid: theirs.jid, picture: `${imageUrl}/logo.png` })).status).toBe(403);
      expect((await call('POST', '/newsletter/settings', { jid: missing, reactionCodes: 'none' })).status).toBe(404);
    });
  });

  describe('POST /newsletter/search', () => {
    it('should search the directory by text, a page at a time with after', async () => {
      for (const name of ['Receitas da Vovó', 'Receitas Fit', 'Receitas Veganas']) await othersChannel(name);
      const first = await call('POST', '/newsletter/search', { searchText: 'receitas', limit: 2 });
      expect(first.status).toBe(200);
      expect(first.body.response.data).toHaveLength(2);
      expect(first.body.response.after).toEqual(expect.any(String));
      const next = await call('POST', '/newsletter/search', { searchText: 'receitas', limit: 2, after: first.body.response.after });
      expect(next.body.response.data).toHaveLength(1);
      expect(next.body.response.after).toBeNull();
      const names = [...first.body.response.data, ...next.body.response.data].map((entry: any) => entry.thread_metadata.name.text).sort();
      expect(names).toEqual(['Receitas Fit', 'Receitas Veganas', 'Receitas da Vovó']);
      const browsed = await call('POST', '/newsletter/search', { view: 'RECOMMENDED', countryCodes: ['BR'] });
      expect(browsed.body.response.data.length).toBeGreaterThan(2);
    });

    it('should answer 400 for bad values', async () => {
      expect(await call('POST', '/newsletter/search', { limit: 0 })).toEqual({ status: 400, body: { error: 'limit must be from 1 to 100' } });
      expect(await call('POST', '/newsletter/search', { countryCodes: 'BR' })).toEqual({
        status: 400,
        body: { error: 'countryCodes must be an array of country codes' },
      });
    });
  });

  describe('admins and ownership', () => {
    it('should invite an admin, revoke an invite, remove an admin and hand the channel over', async () => {
      const jid = await myChannel('Equipe');
      expect(await call('POST', '/newsletter/admin/invite', { jid, phone: friend })).toEqual({ status: 200, body: { response: true } });
      expect((await simChannel(jid)).adminInvites).toEqual([friend]);
      expect((await call('POST', '/newsletter/admin/revoke', { jid, phone: `+${friend}` })).status).toBe(200);
      expect((await simChannel(jid)).adminInvites).toEqual([]);
      expect((await call('POST', '/newsletter/admin/revoke', { jid, phone: friend })).status).toBe(404);

      await call('POST', '/newsletter/admin/invite', { jid, phone: friend });
      await stack.control('POST', `/sim/newsletters/${encodeURIComponent(jid)}/admin-invites/accept`, { phone: friend });
      expect((await simChannel(jid)).admins).toEqual([friend]);
      expect((await call('POST', '/newsletter/admin/remove', { jid, phone: friend })).status).toBe(200);
      expect((await simChannel(jid)).admins).toEqual([]);

      // Ownership goes to an admin only.
      const notAdmin = await call('POST', '/newsletter/owner/transfer', { jid, phone: friend });
      expect(notAdmin.status).toBe(400);
      await call('POST', '/newsletter/admin/invite', { jid, phone: friend });
      await stack.control('POST', `/sim/newsletters/${encodeURIComponent(jid)}/admin-invites/accept`, { phone: friend });
      expect(await call('POST', '/newsletter/owner/transfer', { jid, phone: friend, quitAdmin: true })).toEqual({ status: 200, body: { response: true } });
      const after = await simChannel(jid);
      expect(after.owner).toBe(`${friend}@s.whatsapp.net`);
      expect(after.admins).toEqual([]);
      expect((await call('POST', '/newsletter/info', { jid })).body.response.viewer_metadata.role).not.toBe('owner');
      expect((await call('POST', '/newsletter/admin/invite', { jid, phone: publisher })).status).toBe(403);
    });

    it('should accept an admin invite the instance got, then run the channel', async () => {
      const channel = await othersChannel('Convite para mim', [phone]);
      expect((await call('POST', '/newsletter/admin/accept', { jid: channel.jid })).status).toBe(404);
      await stack.control('POST', `/sim/newsletters/${encodeURIComponent(channel.jid)}/admin-invites`, { phone });
      expect(await call('POST', '/newsletter/admin/accept', { jid: channel.jid })).toEqual({ status: 200, body: { response: true } });
      expect((await simChannel(channel.jid)).admins).toEqual([phone]);
      expect((await call('POST', '/newsletter/info', { jid: channel.jid })).body.response.viewer_metadata.role).toBe('admin');
      expect((await call('POST', '/newsletter/name', { jid: channel.jid, name: 'Renomeado por admin' })).status).toBe(200);
    });

    it('should answer 400 for a missing or bad phone and 403 for an owner-only action', async () => {
      const channel = await othersChannel('Não é meu', [phone]);
      expect(await call('POST', '/newsletter/admin/invite', { jid: channel.jid })).toEqual({ status: 400, body: { error: 'phone is required' } });
      expect(await call('POST', '/newsletter/admin/remove', { jid: channel.jid, phone: 'abc' })).toEqual({ status: 400, body: { error: 'Invalid phone' } });
      expect((await call('POST', '/newsletter/owner/transfer', { jid: channel.jid, phone: friend })).status).toBe(403);
      expect(await call('POST', '/newsletter/owner/transfer', { jid: channel.jid, phone: friend, quitAdmin: 'yes' })).toEqual({
        status: 400,
        body: { error: 'quitAdmin must be a boolean' },
      });
    });
  });
});
