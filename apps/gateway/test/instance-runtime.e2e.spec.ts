import { createServer, Socket, type Server } from 'node:net';
import { nextPhone, sleep, Stack, waitFor } from './support/stack';

type SimDevice = { jid: string; status: string; connected: boolean; loginCount: number };

/**
 * A minimal HTTP CONNECT proxy on loopback: it tunnels to whatever the client asks and counts the
 * tunnels, so a test sees that the worker's socket went through it.
 */
async function startConnectProxy(): Promise<{ port: number; tunnels: string[]; close(): Promise<void> }> {
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.once('data', (head) => {
      const match = /^CONNECT ([^\s:]+):(\d+) HTTP/.exec(head.toString('latin1'));
      if (!match) return client.destroy();
      tunnels.push(`${match[1]}:${match[2]}`);
      const upstream = new Socket();
      sockets.add(upstream);
      upstream.once('close', () => sockets.delete(upstream));
      upstream.connect(Number(match[2]), match[1], () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    tunnels,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** `/instance/reset`, `/instance/wa_messages_limits`, `/instance/history-sync/status` and `/proxy-managed/*` through HTTP, real Baileys against the simulator. */
describe('instance runtime API (HTTP → worker → Baileys → simulator)', () => {
  const stack = new Stack();
  let proxy: Awaited<ReturnType<typeof startConnectProxy>>;
  let niteroi: Awaited<ReturnType<typeof startConnectProxy>>;
  let instanceId: string;
  let token: string;
  let owner: string;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown, as = token) => stack.gw.call(method, path, { token: as, body });
  const devices = () => stack.control<SimDevice[]>('GET', `/sim/devices?phone=${owner}`);
  const status = () => stack.db.dataSource.query(`SELECT status, last_disconnect_reason FROM instances WHERE id = $1`, [instanceId]).then((rows) => rows[0]);

  beforeAll(async () => {
    proxy = await startConnectProxy();
    niteroi = await startConnectProxy();
    await stack.start({
      PROXY_MANAGED_POOLS: JSON.stringify([
        { country: 'br', state: 'sp', city: 'campinas', label: 'Campinas', state_label: 'São Paulo', url: `http://user:secret@127.0.0.1:${proxy.port}` },
        { country: 'br', state: 'sp', city: 'saopaulo', label: 'São Paulo', state_label: 'São Paulo', url: 'http://127.0.0.1:9' },
        { country: 'br', state: 'rj', city: 'riodejaneiro', label: 'Rio de Janeiro', url: 'socks5://127.0.0.1:9' },
        { country: 'br', state: 'rj', city: 'niteroi', label: 'Niterói', url: `http://127.0.0.1:${niteroi.port}` },
        { country: 'br', state: 'mg', city: 'campinas', label: 'Campinas', url: 'http://127.0.0.1:9' },
        { country: 'pt', city: 'lisboa', label: 'Lisboa', url: 'http://127.0.0.1:9' },
      ]),
    });
    ({ id: instanceId, token, phone: owner } = await stack.connectedInstance('runtime'));
  }, 60_000);
  afterAll(async () => {
    await stack.stop();
    await proxy.close();
    await niteroi.close();
  });

  describe('GET /instance/wa_messages_limits', () => {
    it('should say the account may start new chats when WhatsApp reports no restriction', async () => {
      const limits = await call('GET', '/instance/wa_messages_limits');
      expect(limits.status).toBe(200);
      expect(limits.body).toMatchObject({
        provider: 'whatsapp',
        reachable: true,
        can_send_new_messages: true,
        diagnostics_endpoint: '/instance/wa_messages_limits',
        new_chat_message_capping: { available: true, status: 'NONE', used_quota: 0, total_quota: 1000 },
        reachout_timelock: { available: true, active: false, enforcement_type: 'DEFAULT' },
      });
      expect(limits.body).not.toHaveProperty('error_key');
    });

    it('should report a reach-out time lock and a used-up quota as WhatsApp reports them', async () => {
      const until = Math.floor(Date.now() / 1000) + 3600;
      await stack.control('POST', `/sim/accounts/${owner}/limits`, {
        timelock: { is_active: true, time_enforcement_ends: String(until), enforcement_type: 'BIZ_QUALITY' },
      });
      const locked = (await call('GET', '/instance/wa_messages_limits')).body;
      expect(locked).toMatchObject({
        can_send_new_messages: false,
        error_key: 'WHATSAPP_REACHOUT_TIMELOCK',
        reachout_timelock: { available: true, active: true, until: new Date(until * 1000).toISOString(), enforcement_type: 'BIZ_QUALITY' },
      });
      expect(locked.provider_message).toContain('BIZ_QUALITY');
      expect(locked.message_ptbr).toContain('restrição temporária');

      await stack.control('POST', `/sim/accounts/${owner}/limits`, {
        timelock: { is_active: false, time_enforcement_ends: '0' },
        capping: { capping_status: 'CAPPED', used_quota: 10, total_quota: 10, ote_status: 'EXHAUSTED', mv_status: 'ACTIVE' },
      });
      const capped = (await call('GET', '/instance/wa_messages_limits')).body;
      expect(capped).toMatchObject({
        can_send_new_messages: false,
        error_key: 'WHATSAPP_NEW_CHAT_MESSAGE_CAPPING',
        new_chat_message_capping: { available: true, status: 'CAPPED', used_quota: 10, total_quota: 10, ote_status: 'EXHAUSTED', mv_status: 'ACTIVE' },
      });
      await stack.control('POST', `/sim/accounts/${owner}/limits`, { capping: { capping_status: 'NONE', used_quota: 0, total_quota: 1000 } });
    });

    it('should answer No session for an instance nobody holds', async () => {
      const idle = await stack.gw.createInstance('idle-limits');
      expect(await call('GET', '/instance/wa_messages_limits', undefined, idle.token)).toEqual({ status: 409, body: { error: 'No session' } });
    });
  });

  describe('GET /instance/history-sync/status', () => {
    it("should follow the pairing's history by the request_id connect answered", async () => {
      const [row] = await stack.db.dataSource.query(`SELECT pairing_request_id FROM instances WHERE id = $1`, [instanceId]);
      expect(row.pairing_request_id).not.toBe('');
      const done = await waitFor(
        () => call('GET', '/instance/history-sync/status'),
        (reply) => reply.body.status === 'completed',
        20_000,
        'history sync completed',
      );
      expect(done.body).toMatchObject({
        instanceId,
        request_id: row.pairing_request_id,
        paired: true,
        connected: true,
        history_days: expect.any(Number),
        status: 'completed',
        progress: 100,
        counts: { chats: expect.any(Number), contacts: expect.any(Number), messages: expect.any(Number) },
      });
      expect(done.body.batches).toBeGreaterThanOrEqual(1);
      expect(Date.parse(done.body.last_batch_at)).not.toBeNaN();
    });

    it('should say none for an instance never paired', async () => {
      const idle = await stack.gw.createInstance('idle-history');
      expect((await call('GET', '/instance/history-sync/status', undefined, idle.token)).body).toMatchObject({
        status: 'none',
        request_id: '',
        paired: false,
        batches: 0,
      });
    });
  });

  describe('POST /instance/reset', () => {
    it('should reconnect the linked device from its credentials (no new QR), then report the reset in progress or its cooldown', async () => {
      const before = (await devices()).find((device) => device.status === 'active')!;
      // A send waits in the async queue (no dispatcher runs here): the reset wakes the queue's dispatchers too.
      const queued = await call('POST', '/send/text', { number: nextPhone('5596'), text: 'na fila', async: true });
      expect(queued.status).toBe(200);
      const reset = await call('POST', '/instance/reset');
      expect(reset).toEqual({
        status: 200,
        body: { response: 'Instance reset started', resetting: true, instanceId, queuedRecoveryAttempted: true },
      });
      const again = await call('POST', '/instance/reset');
      expect(again.status).toBe(200);
      expect(['Instance reset already in progress', expect.stringMatching(/^Instance reset cooldown active \(\d+s remaining\)$/)]).toContainEqual(
        again.body.response,
      );
      await waitFor(
        devices,
        (list) => list.some((device) => device.jid === before.jid && device.loginCount > before.loginCount && device.connected),
        20_000,
        'relogin',
      );
      await waitFor(status, (row) => row.status === 'connected', 20_000, 'connected again');
      expect((await status()).last_disconnect_reason).toBe('instance reset requested');
      const cooldown = await call('POST', '/instance/reset');
      expect(cooldown.body).toMatchObject({
        response: expect.stringMatching(/^Instance reset cooldown active \(\d+s remaining\)$/),
        resetting: false,
        instanceId,
      });
      // Still the same linked device: nothing was logged out.
      expect((await devices()).filter((device) => device.status === 'active').map((device) => device.jid)).toEqual([before.jid]);
    });

    it('should refuse an instance without a linked device (409) and one disconnected on purpose (403)', async () => {
      const idle = await stack.gw.createInstance('idle-reset');
      expect(await call('POST', '/instance/reset', undefined, idle.token)).toEqual({
        status: 409,
        body: {
          error: 'Instance is not resettable: it has no linked device (connect it with /instance/connect)',
          resetting: false,
          instanceId: idle.id,
          queuedRecoveryAttempted: false,
        },
      });
      await stack.db.dataSource.query(`UPDATE instances SET paired = true, desired_state = 'disconnected' WHERE id = $1`, [idle.id]);
      const blocked = await call('POST', '/instance/reset', undefined, idle.token);
      expect(blocked.status).toBe(403);
      expect(blocked.body).toMatchObject({ resetting: false, instanceId: idle.id, queuedRecoveryAttempted: false });
      expect(blocked.body.error).toMatch(/disconnected on purpose/);
    });
  });

  describe('/proxy-managed and connect with proxy_managed_*', () => {
    it("should list the pools' countries and cities (by state, searched without accents)", async () => {
      expect(await call('GET', '/proxy-managed/countries')).toEqual({
        status: 200,
        body: {
          countries: [
            { value: 'br', label: 'Brasil', cities: 5 },
            { value: 'pt', label: 'Portugal', cities: 1 },
          ],
        },
      });
      const br = await call('GET', '/proxy-managed/cities');
      expect(br.status).toBe(200);
      expect(br.body.country).toBe('br');
      expect(br.body.cities.map((city: { value: string; state: string }) => `${city.state}/${city.value}`)).toEqual([
        'sp/campinas',
        'mg/campinas',
        'rj/niteroi',
        'rj/riodejaneiro',
        'sp/saopaulo',
      ]);
      expect(JSON.stringify(br.body)).not.toContain('127.0.0.1');
      expect(await call('GET', '/proxy-managed/cities?country=br&state=sp&search=sao')).toEqual({
        status: 200,
        body: { country: 'br', state: 'sp', cities: [{ value: 'saopaulo', label: 'São Paulo', state: 'sp', state_label: 'São Paulo', raw_city: 'São Paulo' }] },
      });
      expect(await call('GET', '/proxy-managed/cities?country=BR')).toEqual({
        status: 400,
        body: { error: 'country must be a lowercase ISO alpha-2 code such as br' },
      });
      expect((await call('GET', '/proxy-managed/cities?country=us')).status).toBe(400);
      expect((await call('GET', '/proxy-managed/cities?country=br&state=ba')).status).toBe(400);
    });

    it('should refuse a place the pools do not have, naming the field', async () => {
      const connect = (body: Record<string, string>) => call('POST', '/instance/connect', body);
      expect(await connect({ proxy_managed_country: 'us' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^proxy_managed_country: /) } });
      expect(await connect({ proxy_managed_country: 'br', proxy_managed_state: 'ba' })).toMatchObject({
        status: 400,
        body: { error: expect.stringMatching(/^proxy_managed_state: /) },
      });
      expect(await connect({ proxy_managed_country: 'br', proxy_managed_city: 'recife' })).toMatchObject({
        status: 400,
        body: { error: expect.stringMatching(/^proxy_managed_city: /) },
      });
      expect(await connect({ proxy_managed_country: 'br', proxy_managed_city: 'campinas' })).toEqual({
        status: 400,
        body: { error: 'proxy_managed_state is required: "campinas" is in more than one state (sp, mg)' },
      });
      expect(await connect({ proxy_managed_city: 'campinas' })).toMatchObject({
        status: 400,
        body: { error: expect.stringMatching(/proxy_managed_country is required/) },
      });
      // A place whose proxies do not answer: nothing is assigned.
      expect(await connect({ proxy_managed_country: 'br', proxy_managed_state: 'sp', proxy_managed_city: 'saopaulo' })).toMatchObject({ status: 503 });
      const unassigned = (await call('GET', '/instance/proxy')).body;
      expect(unassigned).not.toHaveProperty('managed_location');
      // No managed proxy: the socket goes direct, and the view says so.
      expect(unassigned).toMatchObject({ mode: 'internal', effective_mode: 'direct' });
      expect(unassigned).not.toHaveProperty('effective_detail');
    });

    it('should connect a new instance through a working proxy of the place and keep it, its URL never shown', async () => {
      const phone = nextPhone();
      await stack.control('POST', '/sim/accounts', { phone, name: 'Proxied' });
      const created = await stack.gw.createInstance('proxied');
      const connect = await call(
        'POST',
        '/instance/connect',
        { proxy_managed_country: 'br', proxy_managed_state: 'sp', proxy_managed_city: 'campinas' },
        created.token,
      );
      expect(connect.status).toBe(200);
      expect(JSON.stringify(connect.body)).not.toContain('secret');
      await stack.control('POST', '/sim/scan', { phone, qr: connect.body.instance.qrcode });
      await waitFor(
        () => call('GET', '/instance/status', undefined, created.token),
        (reply) => reply.body.status?.connected === true,
        20_000,
        'connected through the proxy',
      );
      expect(proxy.tunnels.length).toBeGreaterThan(0);
      const view = (await call('GET', '/instance/proxy', undefined, created.token)).body;
      expect(view).toMatchObject({
        mode: 'internal',
        effective_mode: 'internal',
        effective_detail: 'managed_pool',
        managed: true,
        managed_location: { country: 'br', state: 'sp', city: 'campinas' },
      });
      expect(JSON.stringify(view)).not.toContain('127.0.0.1');
      const [row] = await stack.db.dataSource.query(`SELECT proxy FROM instances WHERE id = $1`, [created.id]);
      expect(row.proxy.managed.proxyUrl).toBe(`http://user:secret@127.0.0.1:${proxy.port}/`);
      await sleep(200);
    });

    it('should give a connected instance a working proxy of the pools with mode internal, and reconnect it through that proxy at once', async () => {
      const other = await stack.connectedInstance('internal-mode');
      const tunnels = () => proxy.tunnels.length + niteroi.tunnels.length;
      const before = tunnels();
      const set = await call('POST', '/instance/proxy', { mode: 'internal' }, other.token);
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({
        details: 'Proxy configurado',
        restart_requested: true,
        proxy: { mode: 'internal', effective_mode: 'internal', effective_detail: 'managed_pool' },
      });
      // Only the Campinas (SP) and Niterói (RJ) proxies answer: one of them is assigned.
      expect([
        { country: 'br', state: 'sp', city: 'campinas' },
        { country: 'br', state: 'rj', city: 'niteroi' },
      ]).toContainEqual(set.body.proxy.managed_location);
      await waitFor(
        async () => tunnels(),
        (count) => count > before,
        20_000,
        'reconnected through the proxy',
      );
      await waitFor(
        () => call('GET', '/instance/status', undefined, other.token),
        (reply) => reply.body.status?.connected === true,
        20_000,
        'connected again',
      );
      // Setting it again changes nothing: no restart.
      expect((await call('POST', '/instance/proxy', { mode: 'internal' }, other.token)).body.restart_requested).toBe(false);
    });

    it('should move a connected instance to the proxy of another place when connect names one', async () => {
      const moving = await stack.connectedInstance('moving');
      expect(
        (await call('POST', '/instance/connect', { proxy_managed_country: 'br', proxy_managed_state: 'sp', proxy_managed_city: 'campinas' }, moving.token))
          .status,
      ).toBe(200);
      await waitFor(
        async () => proxy.tunnels.filter(Boolean).length,
        (count) => count > 0,
        5_000,
        'through campinas',
      );
      const before = niteroi.tunnels.length;
      const moved = await call('POST', '/instance/connect', { proxy_managed_country: 'br', proxy_managed_city: 'niteroi' }, moving.token);
      expect(moved.status).toBe(200);
      await waitFor(
        async () => niteroi.tunnels.length,
        (count) => count > before,
        20_000,
        'reconnected through niteroi',
      );
      expect((await call('GET', '/instance/proxy', undefined, moving.token)).body.managed_location).toEqual({ country: 'br', state: 'rj', city: 'niteroi' });
      await waitFor(
        () => call('GET', '/instance/status', undefined, moving.token),
        (reply) => reply.body.status?.connected === true,
        20_000,
        'connected through niteroi',
      );
    });

    // Last: it closes the Campinas proxy.
    it('rotate_now (uazapi 2.1.1) moves an internal instance to another working proxy at once (rotated: true), 409 when none other answers; proxy_fallback internal or internal_proxy', async () => {
      const rotating = await stack.connectedInstance('rotating');
      const first = await call('POST', '/instance/proxy', { mode: 'internal' }, rotating.token);
      expect(first.status).toBe(200);
      const campinas = { country: 'br', state: 'sp', city: 'campinas' };
      const niteroiPlace = { country: 'br', state: 'rj', city: 'niteroi' };
      const was = first.body.proxy.managed_location;
      const [next, nextServer] = JSON.stringify(was) === JSON.stringify(campinas) ? [niteroiPlace, niteroi] : [campinas, proxy];
      await waitFor(
        () => call('GET', '/instance/status', undefined, rotating.token),
        (reply) => reply.body.status?.connected === true,
        20_000,
        'connected through the first proxy',
      );
      const before = nextServer.tunnels.length;
      const rotated = await call('POST', '/instance/proxy', { mode: 'internal', rotate_now: true }, rotating.token);
      expect(rotated).toMatchObject({
        status: 200,
        body: {
          details: 'Proxy configurado',
          rotated: true,
          restart_requested: true,
          proxy: { mode: 'internal', effective_detail: 'managed_pool', managed_location: next },
        },
      });
      await waitFor(
        async () => nextServer.tunnels.length,
        (count) => count > before,
        20_000,
        'reconnected through the other proxy',
      );
      // Only for mode internal.
      const custom = await call('POST', '/instance/proxy', { mode: 'custom', proxy_url: 'http://127.0.0.1:3128', rotate_now: true }, rotating.token);
      expect(custom).toMatchObject({ status: 400, body: { error: 'rotate_now is only for mode internal' } });
      // The only other working proxy gone: nothing to rotate to.
      const other = nextServer === proxy ? niteroi : proxy;
      await other.close();
      const none = await call('POST', '/instance/proxy', { mode: 'internal', rotate_now: true }, rotating.token);
      expect(none).toMatchObject({ status: 409, body: { error: expect.stringContaining('no other proxy') } });
      expect((await call('GET', '/instance/proxy', undefined, rotating.token)).body.managed_location).toEqual(next);

      // proxy_fallback: 2.1.1's `internal` and 2.1.0's `internal_proxy` are the same policy, shown by its new name.
      const idle = await stack.gw.createInstance('fallbacks');
      for (const fallback of ['internal', 'internal_proxy']) {
        const set = await call('POST', '/instance/proxy', { mode: 'custom', proxy_url: 'http://u:p@127.0.0.1:3128', proxy_fallback: fallback }, idle.token);
        expect(set).toMatchObject({ status: 200, body: { proxy: { mode: 'custom', proxy_fallback: 'internal' } } });
      }
      expect((await call('GET', '/instance/proxy', undefined, idle.token)).body.proxy_fallback).toBe('internal');
    });
  });
});
