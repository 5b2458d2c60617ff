import { Subjects, type ConnectReply } from '@gw/contracts';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

describe('instance API without a session worker (HTTP)', () => {
  let gw: GatewayHarness;
  let token: string;
  let id: string;

  beforeAll(async () => {
    gw = await startGateway();
    ({ token, id } = await gw.createInstance('settings'));
  });
  afterAll(() => gw.close());

  it('should answer 401 Invalid token for a missing or unknown token', async () => {
    expect(await gw.call('GET', '/instance/status')).toEqual({ status: 401, body: { error: 'Invalid token' } });
    expect(await gw.call('GET', '/instance/status', { token: 'b5a1f2c3-0000-4000-8000-000000000000' })).toEqual({
      status: 401,
      body: { error: 'Invalid token' },
    });
  });

  describe('GET /instance/status', () => {
    it('should report a new instance as disconnected', async () => {
      const { status, body } = await gw.call('GET', '/instance/status', { token });
      expect(status).toBe(200);
      expect(body.status).toEqual({ connected: false, loggedIn: false, jid: null });
      expect(body.instance).toMatchObject({ id, status: 'disconnected' });
    });

    it('should show exactly the Instance record fields', async () => {
      const { body } = await gw.call('GET', '/instance/status', { token });
      expect(Object.keys(body.instance).sort()).toEqual(
        [
          'id',
          'token',
          'status',
          'paircode',
          'qrcode',
          'name',
          'profileName',
          'profilePicUrl',
          'isBusiness',
          'plataform',
          'systemName',
          'owner',
          'lastDisconnect',
          'lastDisconnectReason',
          'adminField01',
          'adminField02',
          'openai_apikey',
          'chatbot_enabled',
          'chatbot_ignoreGroups',
          'chatbot_stopConversation',
          'chatbot_stopMinutes',
          'chatbot_stopWhenYouSendMsg',
          'fieldsMap',
          'msg_delay_min',
          'msg_delay_max',
          'currentPresence',
          'currentTime',
          'created',
          'updated',
        ].sort(),
      );
    });
  });

  describe('WhatsApp out of reach', () => {
    const why = 'cannot reach WhatsApp: connect ECONNREFUSED 157.240.0.53:443';

    it('should say why in the connect answer and the status, instead of an empty QR code alone', async () => {
      const { token: nowhere, id: nowhereId } = await gw.createInstance('nowhere');
      // A stand-in session worker that, like a real one, could not reach WhatsApp.
      const worker = gw.bus.subscribe(
        Subjects.place,
        async () => {
          await gw.db.dataSource.query(`UPDATE instances SET status = 'connecting', last_disconnect_reason = $1 WHERE id = $2`, [why, nowhereId]);
          return { status: 'connecting', loggedIn: false, jid: null, qrcode: '', paircode: '', requestId: 'r-1', reason: why } satisfies ConnectReply;
        },
        { queue: 'session-workers' },
      );
      try {
        const connect = await gw.call('POST', '/instance/connect', { token: nowhere, body: {} });
        expect(connect.status).toBe(200);
        expect(connect.body).toMatchObject({ connected: false, instance: { status: 'connecting', qrcode: '' }, reason: why });
        const status = await gw.call('GET', '/instance/status', { token: nowhere });
        expect(status.body).toMatchObject({ status: { connected: false }, reason: why });
      } finally {
        worker.unsubscribe();
      }
      // A QR code to scan is its own answer: no reason beside it.
      await gw.db.dataSource.query(`UPDATE instances SET qrcode = 'data:image/png;base64,AA' WHERE id = $1`, [nowhereId]);
      expect((await gw.call('GET', '/instance/status', { token: nowhere })).body.reason).toBeUndefined();
    });
  });

  describe('POST /instance/updateDelaySettings', () => {
    it('should turn negatives into 0', async () => {
      const { status, body } = await gw.call('POST', '/instance/updateDelaySettings', { token, body: { msg_delay_min: -3, msg_delay_max: -1 } });
      expect(status).toBe(200);
      expect(body.instance).toMatchObject({ msg_delay_min: 0, msg_delay_max: 0 });
    });

    it('should raise max to min when lower', async () => {
      const { body } = await gw.call('POST', '/instance/updateDelaySettings', { token, body: { msg_delay_min: 5, msg_delay_max: 2 } });
      expect(body.instance).toMatchObject({ msg_delay_min: 5, msg_delay_max: 5 });
    });

    it('should refuse a wrong type as an invalid request payload', async () => {
      const { status, body } = await gw.call('POST', '/instance/updateDelaySettings', { token, body: { msg_delay_min: 'x', msg_delay_max: 2 } });
      expect(status).toBe(400);
      expect(body.error).toMatch(/^Invalid request payload/);
    });
  });

  describe('POST /instance/updateInstanceName', () => {
    it('should rename', async () => {
      const { status, body } = await gw.call('POST', '/instance/updateInstanceName', { token, body: { name: 'renamed' } });
      expect(status).toBe(200);
      expect(body.name).toBe('renamed');
    });

    it('should refuse an empty name', async () => {
      const { status } = await gw.call('POST', '/instance/updateInstanceName', { token, body: { name: '' } });
      expect(status).toBe(400);
    });
  });

  describe('POST /instance/updateFieldsMap', () => {
    it('should store display names of lead fields', async () => {
      const { status, body } = await gw.call('POST', '/instance/updateFieldsMap', {
        token,
        body: { lead_field01: 'CPF', lead_field20: 'Plan', other: 'ignored' },
      });
      expect(status).toBe(200);
      expect(body.fieldsMap).toEqual({ lead_field01: 'CPF', lead_field20: 'Plan' });
    });
  });

  describe('POST /instance/updatechatbotsettings', () => {
    it('should store the chatbot fields and mask the key', async () => {
      const { status, body } = await gw.call('POST', '/instance/updatechatbotsettings', {
        token,
        body: {
          openai_apikey: 'sk-abcdefghijklmnop',
          chatbot_enabled: true,
          chatbot_ignoreGroups: true,
          chatbot_stopConversation: 'stop',
          chatbot_stopMinutes: 30,
        },
      });
      expect(status).toBe(200);
      expect(body).toMatchObject({ chatbot_enabled: true, chatbot_ignoreGroups: true, chatbot_stopConversation: 'stop', chatbot_stopMinutes: 30 });
      expect(body.openai_apikey).not.toContain('abcdefghijklmnop');
    });
  });

  describe('values no column can hold', () => {
    it('should refuse delays and chatbot minutes beyond their range with a 400, not a database error', async () => {
      for (const body of [
        { msg_delay_min: 2 ** 31, msg_delay_max: 2 ** 31 },
        { msg_delay_min: 1, msg_delay_max: 2 ** 53 + 2 },
      ]) {
        const { status, body: answer } = await gw.call('POST', '/instance/updateDelaySettings', { token, body });
        expect({ status, error: answer.error }).toEqual({ status: 400, error: expect.stringMatching(/must be at most 86400 seconds/) });
      }
      const minutes = await gw.call('POST', '/instance/updatechatbotsettings', { token, body: { chatbot_stopMinutes: 2 ** 31 } });
      expect(minutes).toMatchObject({ status: 400, body: { error: expect.stringMatching(/chatbot_stopMinutes must be at most/) } });
    });

    it('should refuse null where a value is required and clear with null where clearing makes sense', async () => {
      expect((await gw.call('POST', '/instance/updatechatbotsettings', { token, body: { chatbot_enabled: null } })).status).toBe(400);
      expect((await gw.call('POST', '/instance/updatechatbotsettings', { token, body: { chatbot_stopMinutes: null } })).status).toBe(400);
      const cleared = await gw.call('POST', '/instance/updatechatbotsettings', { token, body: { openai_apikey: null, chatbot_stopConversation: null } });
      expect(cleared).toMatchObject({ status: 200, body: { openai_apikey: '', chatbot_stopConversation: '' } });
      await gw.call('POST', '/instance/updateFieldsMap', { token, body: { lead_field01: 'cpf' } });
      const unnamed = await gw.call('POST', '/instance/updateFieldsMap', { token, body: { lead_field01: null } });
      expect(unnamed.status).toBe(200);
      expect(unnamed.body.fieldsMap?.lead_field01).toBeUndefined();
    });
  });

  describe('/instance/proxy', () => {
    it('should default to the internal mode', async () => {
      const { status, body } = await gw.call('GET', '/instance/proxy', { token });
      expect(status).toBe(200);
      expect(body).toMatchObject({ mode: 'internal', proxy_url: '' });
    });

    it('should store a custom proxy with its password masked', async () => {
      const { status, body } = await gw.call('POST', '/instance/proxy', {
        token,
        body: { mode: 'custom', proxy_url: 'http://user:secretpw@proxy.example:8080' },
      });
      expect(status).toBe(200);
      expect(body.details).toBe('Proxy configurado');
      expect(body.proxy.proxy_url).toBe('http://***:***@proxy.example:8080');
      expect(JSON.stringify(body)).not.toContain('secretpw');
      const view = await gw.call('GET', '/instance/proxy', { token });
      expect(view.body.mode).toBe('custom');
      expect(JSON.stringify(view.body)).not.toContain('secretpw');
    });

    it('should refuse a custom proxy without a URL, a bad protocol, and none without confirmation', async () => {
      expect((await gw.call('POST', '/instance/proxy', { token, body: { mode: 'custom' } })).status).toBe(400);
      const missing = { status: 400, body: { error: 'mode is required (custom, internal or none)' } };
      expect(await gw.call('POST', '/instance/proxy', { token, body: {} })).toEqual(missing);
      expect(await gw.call('POST', '/instance/proxy', { token, body: { mode: null } })).toEqual(missing);
      expect(await gw.call('POST', '/instance/proxy', { token, body: { mode: 'tor' } })).toEqual({
        status: 400,
        body: { error: 'mode must be one of custom, internal, none' },
      });
      // The older body: `enable` stands for the mode.
      expect((await gw.call('POST', '/instance/proxy', { token, body: { enable: false } })).body.proxy).toMatchObject({ mode: 'internal' });
      expect((await gw.call('POST', '/instance/proxy', { token, body: { mode: 'custom', proxy_url: 'ftp://h:1' } })).status).toBe(400);
      expect((await gw.call('POST', '/instance/proxy', { token, body: { mode: 'none' } })).status).toBe(400);
      expect((await gw.call('POST', '/instance/proxy', { token, body: { mode: 'bogus' } })).status).toBe(400);
    });

    it('should refuse a custom proxy or fallback at a private or reserved address, however it is spelled', async () => {
      const before = (await gw.call('GET', '/instance/proxy', { token })).body;
      const refused = [
        'http://10.0.0.1:3128',
        'http://169.254.169.254:8080',
        'http://[::ffff:a9fe:a9fe]:8080',
        'http://[64:ff9b:1::a00:1]:8080',
        'socks5://0x0a000001:1080',
        'socks5h://167772161:1080',
        'https://0251.0376.0251.0376:8443',
      ];
      for (const proxy_url of refused) {
        const answer = await gw.call('POST', '/instance/proxy', { token, body: { mode: 'custom', proxy_url } });
        expect({ proxy_url, ...answer }).toEqual({
          proxy_url,
          status: 400,
          body: { error: 'proxy_url points to a private or reserved address; to allow it, add its range to SSRF_ALLOWLIST' },
        });
      }
      const fallback = await gw.call('POST', '/instance/proxy', {
        token,
        body: { mode: 'custom', proxy_url: 'http://proxy.example:8080', proxy_fallback: 'http://192.168.1.1:3128' },
      });
      expect(fallback).toEqual({
        status: 400,
        body: { error: 'proxy_fallback points to a private or reserved address; to allow it, add its range to SSRF_ALLOWLIST' },
      });
      // Nothing half-written: the stored proxy is the one before.
      expect((await gw.call('GET', '/instance/proxy', { token })).body).toEqual(before);
    });

    it('should remove the proxy', async () => {
      const { status, body } = await gw.call('DELETE', '/instance/proxy', { token });
      expect(status).toBe(200);
      expect(body.proxy.mode).toBe('internal');
    });
  });

  describe('without a session', () => {
    it('should refuse presence and privacy with No session', async () => {
      expect(await gw.call('POST', '/instance/presence', { token, body: { presence: 'available' } })).toEqual({ status: 409, body: { error: 'No session' } });
      expect(await gw.call('GET', '/instance/privacy', { token })).toEqual({ status: 409, body: { error: 'No session' } });
    });

    it('should validate presence before anything else', async () => {
      const { status, body } = await gw.call('POST', '/instance/presence', { token, body: { presence: 'busy' } });
      expect(status).toBe(400);
      expect(body.error).toBe('Invalid presence value, use available or unavailable');
    });

    it('should answer connect with 503 when no session worker runs', async () => {
      const { status, body } = await gw.call('POST', '/instance/connect', { token, body: {} });
      expect(status).toBe(503);
      expect(body).toEqual({ error: expect.any(String) });
    });

    it('should validate connect fields', async () => {
      expect((await gw.call('POST', '/instance/connect', { token, body: { phone: '12ab' } })).status).toBe(400);
      expect((await gw.call('POST', '/instance/connect', { token, body: { browser: 'opera' } })).status).toBe(400);
      expect((await gw.call('POST', '/instance/connect', { token, body: { history_days: 'ten' } })).status).toBe(400);
      expect((await gw.call('POST', '/instance/connect', { token, body: { proxy_managed_country: 'BR' } })).status).toBe(400);
    });

    it('should disconnect by forgetting the credentials', async () => {
      const { status, body } = await gw.call('POST', '/instance/disconnect', { token });
      expect(status).toBe(200);
      expect(body).toMatchObject({ response: 'Disconnected', instance: { status: 'disconnected' } });
    });
  });

  describe('DELETE /instance', () => {
    it('should delete the instance and invalidate its token', async () => {
      const other = await gw.createInstance('to-delete');
      const { status, body } = await gw.call('DELETE', '/instance', { token: other.token });
      expect(status).toBe(200);
      expect(body.response).toBe('Instance Deleted');
      expect((await gw.call('GET', '/instance/status', { token: other.token })).status).toBe(401);
    });
  });
});
