import { nextPhone, Stack, waitFor } from './support/stack';

interface SimNewsletter {
  jid: string;
  name: string;
  description: string;
  invite: string;
  owner: string;
  followers: Array<{ phone: string; muted: boolean }>;
  posts: Array<{ id: string }>;
}

/** `/newsletter/*` through HTTP, real Baileys against the simulator's channels. */
describe('newsletter API (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let token: string;
  let phone: string;
  let publisher: string;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
  const simChannel = (jid: string) => stack.control<SimNewsletter>('GET', `/sim/newsletters/${encodeURIComponent(jid)}`);
  /** A channel another account owns. */
  const othersChannel = (name: string, followers: string[] = []) =>
    stack.control<SimNewsletter>('POST', '/sim/newsletters', { owner: publisher, name, description: 'de outro', followers });
  const missing = '120363999999999999@newsletter';

  beforeAll(async () => {
    await stack.start();
    ({ token, phone } = await stack.connectedInstance('newsletters-api'));
    publisher = nextPhone('5598');
    await stack.control('POST', '/sim/accounts', { phone: publisher, name: 'Publisher' });
  }, 60_000);
  afterAll(() => stack.stop());

  describe('POST /newsletter/create', () => {
    it('should create a channel the instance owns and answer its metadata', async () => {
      const { status, body } = await call('POST', '/newsletter/create', { name: 'Canal de Promoções', description: 'Ofertas e novidades da loja' });
      expect(status).toBe(200);
      expect(body.response).toMatchObject({
        state: { type: 'active' },
        thread_metadata: {
          name: { text: 'Canal de Promoções' },
          description: { text: 'Ofertas e novidades da loja' },
          subscribers_count: '0',
          verification: 'unverified',
        },
        viewer_metadata: { mute: 'off', role: 'owner' },
      });
      expect(body.response.id).toMatch(/^\d+@newsletter$/);
      const channel = await simChannel(body.response.id);
      expect(channel).toMatchObject({ name: 'Canal de Promoções', description: 'Ofertas e novidades da loja', owner: `${phone}@s.whatsapp.net` });
      expect(body.response.thread_metadata.invite).toBe(channel.invite);
    });

    it('should refuse a body without a name, or a name too long', async () => {
      expect(await call('POST', '/newsletter/create', { description: 'x' })).toEqual({ status: 400, body: { error: 'name is required' } });
      expect(await call('POST', '/newsletter/create', { name: '   ' })).toEqual({ status: 400, body: { error: 'name is required' } });
      expect(await call('POST', '/newsletter/create', { name: 'x'.repeat(101) })).toEqual({
        status: 400,
        body: { error: 'name must be at most 100 characters' },
      });
      expect(await call('POST', '/newsletter/create', { name: 'x', description: 5 })).toEqual({ status: 400, body: { error: 'description must be a string' } });
    });
  });

  describe('POST /newsletter/info', () => {
    it('should answer a channel by jid or by its digits, as a guest when not following', async () => {
      const channel = await othersChannel('Notícias');
      const byJid = await call('POST', '/newsletter/info', { jid: channel.jid });
      expect(byJid.status).toBe(200);
      expect(byJid.body.response).toMatchObject({
        id: channel.jid,
        thread_metadata: { name: { text: 'Notícias' }, description: { text: 'de outro' }, invite: channel.invite },
        viewer_metadata: { role: 'guest' },
      });
      const byId = await call('POST', '/newsletter/info', { id: channel.jid.replace('@newsletter', '') });
      expect(byId).toEqual(byJid);
    });

    it('should answer 404 for a channel WhatsApp does not know, and 400 for a missing or bad id', async () => {
      const unknown = await call('POST', '/newsletter/info', { jid: missing });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toMatch(/newsletter not found/);
      expect(await call('POST', '/newsletter/info', {})).toEqual({ status: 400, body: { error: 'id or jid is required' } });
      expect(await call('POST', '/newsletter/info', { jid: '12345@g.us' })).toEqual({ status: 400, body: { error: 'jid: invalid newsletter id' } });
      expect(await call('POST', '/newsletter/info', { id: 42 })).toEqual({ status: 400, body: { error: 'invalid newsletter id' } });
    });
  });

  describe('POST /newsletter/link', () => {
    it('should answer the channel an invite key or link leads to', async () => {
      const channel = await othersChannel('Convites');
      const byKey = await call('POST', '/newsletter/link', { key: channel.invite });
      expect(byKey.status).toBe(200);
      expect(byKey.body.response).toMatchObject({ id: channel.jid, thread_metadata: { name: { text: 'Convites' } } });
      const byLink = await call('POST', '/newsletter/link', { key: `https://whatsapp.com/channel/${channel.invite}` });
      expect(byLink.body.response.id).toBe(channel.jid);
    });

    it('should answer 404 for a key WhatsApp does not know, and 400 without one', async () => {
      expect((await call('POST', '/newsletter/link', { key: 'UnknownInviteKey123' })).status).toBe(404);
      expect(await call('POST', '/newsletter/link', {})).toEqual({ status: 400, body: { error: 'key is required' } });
      expect(await call('POST', '/newsletter/link', { key: 'not a key!' })).toEqual({ status: 400, body: { error: 'invalid invite key' } });
    });
  });

  describe('GET /newsletter/list, follow, unfollow, mute, unmute', () => {
    it('should follow and unfollow a channel, and list the channels followed or owned', async () => {
      const followed = await othersChannel('Seguido', [phone]);
      const other = await othersChannel('Não seguido');
      const own = (await call('POST', '/newsletter/create', { name: 'Meu canal' })).body.response.id as string;

      const listed = await call('GET', '/newsletter/list');
      expect(listed.status).toBe(200);
      const ids = listed.body.response.map((entry: { id: string }) => entry.id);
      expect(ids).toEqual(expect.arrayContaining([followed.jid, own]));
      expect(ids).not.toContain(other.jid);
      expect(listed.body.response.find((entry: { id: string }) => entry.id === followed.jid)).toMatchObject({ viewer_metadata: { role: 'subscriber' } });

      expect(await call('POST', '/newsletter/follow', { jid: other.jid })).toEqual({ status: 200, body: { response: true } });
      expect((await simChannel(other.jid)).followers).toEqual([{ phone, muted: false }]);
      const after = (await call('GET', '/newsletter/list')).body.response.map((entry: { id: string }) => entry.id);
      expect(after).toContain(other.jid);

      expect(await call('POST', '/newsletter/unfollow', { id: other.jid.replace('@newsletter', '') })).toEqual({ status: 200, body: { response: true } });
      expect((await simChannel(other.jid)).followers).toEqual([]);
    });

    it('should mute and unmute a followed channel', async () => {
      const channel = await othersChannel('Silenciar', [phone]);
      expect(await call('POST', '/newsletter/mute', { jid: channel.jid })).toEqual({ status: 200, body: { response: true } });
      expect((await simChannel(channel.jid)).followers).toEqual([{ phone, muted: true }]);
      const info = await call('POST', '/newsletter/info', { jid: channel.jid });
      expect(info.body.response.viewer_metadata).toEqual({ mute: 'on', role: 'subscriber' });
      expect(await call('POST', '/newsletter/unmute', { jid: channel.jid })).toEqual({ status: 200, body: { response: true } });
      expect((await simChannel(channel.jid)).followers).toEqual([{ phone, muted: false }]);
    });

    it('should answer 404 for a channel that does not exist and 400 for a bad id', async () => {
      for (const path of ['/newsletter/follow', '/newsletter/unfollow', '/newsletter/mute', '/newsletter/unmute']) {
        expect({ path, status: (await call('POST', path, { jid: missing })).status }).toEqual({ path, status: 404 });
        expect({ path, reply: await call('POST', path, { jid: 'nope' }) }).toEqual({
          path,
          reply: { status: 400, body: { error: 'jid: invalid newsletter id' } },
        });
      }
    });
  });

  describe('POST /newsletter/name, /newsletter/description, /newsletter/delete', () => {
    it('should rename and describe a channel the instance owns', async () => {
      const jid = (await call('POST', '/newsletter/create', { name: 'Antigo', description: 'antes' })).body.response.id as string;
      expect(await call('POST', '/newsletter/name', { jid, name: 'Canal de Promoções VIP' })).toEqual({ status: 200, body: { response: true } });
      expect(await call('POST', '/newsletter/description', { jid, description: 'Atualizações, ofertas e novidades' })).toEqual({
        status: 200,
        body: { response: true },
      });
      expect(await simChannel(jid)).toMatchObject({ name: 'Canal de Promoções VIP', description: 'Atualizações, ofertas e novidades' });
      expect(await call('POST', '/newsletter/description', { jid, description: '' })).toEqual({ status: 200, body: { response: true } });
      expect((await simChannel(jid)).description).toBe('');
    });

    it('should refuse a channel the instance does not own (403), one that does not exist (404), and bad values (400)', async () => {
      const channel = await othersChannel('Alheio', [phone]);
      for (const [path, body] of [
        ['/newsletter/name', { jid: channel.jid, name: 'Tomado' }],
        ['/newsletter/description', { jid: channel.jid, description: 'Tomado' }],
        ['/newsletter/delete', { jid: channel.jid }],
      ] as const) {
        const reply = await call('POST', path, body);
        expect({ path, status: reply.status }).toEqual({ path, status: 403 });
        expect(reply.body.error).toMatch(/not the owner or an admin/);
        expect({ path, status: (await call('POST', path, { ...body, jid: missing })).status }).toEqual({ path, status: 404 });
      }
      expect(await simChannel(channel.jid)).toMatchObject({ name: 'Alheio', description: 'de outro' });
      expect(await call('POST', '/newsletter/name', { jid: channel.jid })).toEqual({ status: 400, body: { error: 'name is required' } });
      expect(await call('POST', '/newsletter/description', { jid: channel.jid })).toEqual({ status: 400, body: { error: 'description is required' } });
      expect(await call('POST', '/newsletter/name', { name: 'x' })).toEqual({ status: 400, body: { error: 'id or jid is required' } });
    });

    it('should delete a channel the instance owns: it is gone from WhatsApp', async () => {
      const jid = (await call('POST', '/newsletter/create', { name: 'Temporário' })).body.response.id as string;
      expect(await call('POST', '/newsletter/delete', { jid })).toEqual({ status: 200, body: { response: true } });
      expect((await call('POST', '/newsletter/info', { jid })).status).toBe(404);
      const ids = (await call('GET', '/newsletter/list')).body.response.map((entry: { id: string }) => entry.id);
      expect(ids).not.toContain(jid);
    });
  });

  describe('POST /newsletter/messages', () => {
    it('should answer the posts with their views and reactions, newest count, and page back with beforeid', async () => {
      const reader = nextPhone('5597');
      await stack.control('POST', '/sim/accounts', { phone: reader, name: 'Reader' });
      const channel = await othersChannel('Posts do canal', [phone, reader]);
      const path = `/sim/newsletters/${encodeURIComponent(channel.jid)}/posts`;
      const posted: Array<{ id: string; serverId: number }> = [];
      for (const text of ['um', 'dois', 'três']) posted.push(await stack.control('POST', path, { text }));
      await stack.control('POST', `${path}/${posted[1].serverId}/views`, { count: 1200 });
      await stack.control('POST', `${path}/${posted[1].serverId}/reactions`, { phone: reader, code: '👍' });
      await stack.control('POST', `${path}/${posted[1].serverId}/reactions`, { phone: publisher, code: '👍' });
      await stack.control('POST', `${path}/${posted[2].serverId}/reactions`, { phone: reader, code: '🔥' });

      const { status, body } = await call('POST', '/newsletter/messages', { jid: channel.jid, count: 20 });
      expect(status).toBe(200);
      expect(body.response.map((post: { serverid: number }) => post.serverid)).toEqual(posted.map((post) => post.serverId));
      expect(body.response[1]).toEqual({
        serverid: posted[1].serverId,
        messageid: posted[1].id,
        type: 'text',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        viewsCount: 1200,
        reactionCounts: { '👍': 2 },
        message: { conversation: 'dois' },
      });
      expect(body.response[0]).toMatchObject({ viewsCount: 0, reactionCounts: {}, message: { conversation: 'um' } });
      expect(body.response[2]).toMatchObject({ reactionCounts: { '🔥': 1 } });

      const newest = await call('POST', '/newsletter/messages', { id: channel.jid.replace('@newsletter', ''), count: 1 });
      expect(newest.body.response.map((post: { serverid: number }) => post.serverid)).toEqual([posted[2].serverId]);
      const before = await call('POST', '/newsletter/messages', { jid: channel.jid, count: 20, beforeid: posted[2].serverId });
      expect(before.body.response.map((post: { serverid: number }) => post.serverid)).toEqual([posted[0].serverId, posted[1].serverId]);
      // Without count: the newest 20.
      expect((await call('POST', '/newsletter/messages', { jid: channel.jid })).body.response).toHaveLength(3);
    });

    it('should answer 404 for a channel that does not exist and 400 for bad values', async () => {
      expect((await call('POST', '/newsletter/messages', { jid: missing })).status).toBe(404);
      expect(await call('POST', '/newsletter/messages', { count: 5 })).toEqual({ status: 400, body: { error: 'id or jid is required' } });
      expect(await call('POST', '/newsletter/messages', { jid: missing, count: 0 })).toEqual({ status: 400, body: { error: 'count must be from 1 to 100' } });
      expect(await call('POST', '/newsletter/messages', { jid: missing, count: 'x' })).toEqual({ status: 400, body: { error: 'count must be an integer' } });
      expect(await call('POST', '/newsletter/messages', { jid: missing, beforeid: -1 })).toEqual({
        status: 400,
        body: { error: 'beforeid must be a positive server id' },
      });
    });
  });

  describe('POST /newsletter/updates (deprecated)', () => {
    it('should answer 504 with {error} for a valid body, as uazapiGO does since WhatsApp stopped answering, and 400 for bad values', async () => {
      const channel = await othersChannel('Atualizações', [phone]);
      const reply = await call('POST', '/newsletter/updates', { jid: channel.jid, count: 50, afterid: 100, since: 1710000000 });
      expect(reply).toEqual({
        status: 504,
        body: { error: 'WhatsApp no longer answers newsletter message updates: read views and reactions with /newsletter/messages' },
      });
      expect(await call('POST', '/newsletter/updates', {})).toEqual({ status: 400, body: { error: 'id or jid is required' } });
      expect(await call('POST', '/newsletter/updates', { jid: channel.jid, afterid: 0 })).toEqual({
        status: 400,
        body: { error: 'afterid must be a positive server id' },
      });
      expect(await call('POST', '/newsletter/updates', { jid: channel.jid, since: 'ontem' })).toEqual({
        status: 400,
        body: { error: 'since must be an integer' },
      });
      const document = await stack.gw.call('GET', '/openapi.json');
      expect(document.body.paths['/newsletter/updates'].post.deprecated).toBe(true);
    });
  });

  it('should still post to a channel the instance created, with /send/text and the full @newsletter JID', async () => {
    const jid = (await call('POST', '/newsletter/create', { name: 'Posts' })).body.response.id as string;
    const sent = await call('POST', '/send/text', { number: jid, text: 'primeiro post' });
    expect(sent.status).toBe(200);
    await waitFor(
      () => simChannel(jid),
      (channel) => channel.posts.some((post) => post.id === sent.body.messageid),
      15_000,
      'the post in the channel',
    );
  });
});
