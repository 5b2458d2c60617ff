import { startGateway, type GatewayHarness } from './support/gateway-harness';

describe('admin API (HTTP)', () => {
  let gw: GatewayHarness;

  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw.close());

  describe('POST /instance/create', () => {
    it('should create a disconnected instance with a random token', async () => {
      const { status, body } = await gw.call('POST', '/instance/create', {
        admin: gw.adminToken,
        body: { name: 'shop', adminField01: 'a1', systemName: 'crm' },
      });
      expect(status).toBe(200);
      expect(body).toMatchObject({ response: 'Instance created successfully', connected: false, loggedIn: false, name: 'shop' });
      expect(body.token).toMatch(/^[0-9a-f-]{36}$/);
      expect(body.instance).toMatchObject({ name: 'shop', status: 'disconnected', adminField01: 'a1', systemName: 'crm', token: body.token });
      expect(body.instance.id).toMatch(/^r[0-9a-f]{14}$/);
      expect(typeof body.info).toBe('string');
    });

    it('should accept the older /instance/init path', async () => {
      const { status, body } = await gw.call('POST', '/instance/init', { admin: gw.adminToken, body: { name: 'legacy' } });
      expect(status).toBe(200);
      expect(body.instance.name).toBe('legacy');
    });

    it('should refuse a missing name with 400 naming the field', async () => {
      const { status, body } = await gw.call('POST', '/instance/create', { admin: gw.adminToken, body: {} });
      expect(status).toBe(400);
      expect(body.error).toMatch(/name/);
    });

    it('should refuse a name of the wrong type with 400', async () => {
      const { status, body } = await gw.call('POST', '/instance/create', { admin: gw.adminToken, body: { name: 42 } });
      expect(status).toBe(400);
      expect(body.error).toMatch(/name/);
    });

    it('should answer malformed JSON with 400', async () => {
      const { status, body } = await gw.call('POST', '/instance/create', { admin: gw.adminToken, raw: '{"name":' });
      expect(status).toBe(400);
      expect(body).toEqual({ error: expect.any(String) });
    });
  });

  describe('authentication', () => {
    it('should answer 403 for a missing or wrong admin token', async () => {
      expect(await gw.call('GET', '/instance/all')).toEqual({ status: 403, body: { error: 'Invalid AdminToken Header' } });
      expect(await gw.call('GET', '/instance/all', { admin: 'nope' })).toEqual({ status: 403, body: { error: 'Invalid AdminToken Header' } });
    });

    it('should never open an admin route with an instance token', async () => {
      const { token } = await gw.createInstance('tenant');
      expect((await gw.call('GET', '/instance/all', { admin: token })).status).toBe(403);
      expect((await gw.call('GET', '/instance/all', { token })).status).toBe(403);
    });

    it('should never open an instance route with the admin token', async () => {
      expect(await gw.call('GET', '/instance/status', { token: gw.adminToken })).toEqual({ status: 401, body: { error: 'Invalid token' } });
      expect(await gw.call('GET', '/instance/status', { admin: gw.adminToken })).toEqual({ status: 401, body: { error: 'Invalid token' } });
    });
  });

  describe('GET /instance/all', () => {
    it('should list instances with secrets masked', async () => {
      const { token } = await gw.createInstance('with-secret');
      await gw.call('POST', '/instance/updatechatbotsettings', { token, body: { openai_apikey: 'sk-verysecretkey123456' } });
      const { status, body } = await gw.call('GET', '/instance/all', { admin: gw.adminToken });
      expect(status).toBe(200);
      const entry = body.find((instance: { name: string }) => instance.name === 'with-secret');
      expect(entry.openai_apikey).not.toContain('verysecret');
      expect(entry.openai_apikey.startsWith('sk-')).toBe(true);
    });
  });

  describe('POST /instance/updateAdminFields', () => {
    it('should update admin fields by id', async () => {
      const { id } = await gw.createInstance('fields');
      const { status, body } = await gw.call('POST', '/instance/updateAdminFields', {
        admin: gw.adminToken,
        body: { id, adminField01: 'x', adminField02: 'y' },
      });
      expect(status).toBe(200);
      expect(body).toMatchObject({ id, adminField01: 'x', adminField02: 'y' });
    });

    it('should answer 404 for an unknown id', async () => {
      const { status, body } = await gw.call('POST', '/instance/updateAdminFields', { admin: gw.adminToken, body: { id: 'rnope', adminField01: 'x' } });
      expect(status).toBe(404);
      expect(body.error).toBeDefined();
    });
  });

  describe('POST /admin/token/rotate', () => {
    it('should issue a new token and stop the old one at once', async () => {
      const old = gw.adminToken;
      const { status, body } = await gw.call('POST', '/admin/token/rotate', { admin: old });
      expect(status).toBe(200);
      expect(body.admin_token).toMatch(/^[A-Za-z0-9]{50}$/);
      expect((await gw.call('GET', '/instance/all', { admin: old })).status).toBe(403);
      expect((await gw.call('GET', '/instance/all', { admin: body.admin_token })).status).toBe(200);
      gw.adminToken = body.admin_token;
    });
  });

  describe('POST /admin/restart', () => {
    it('should answer 202', async () => {
      const { status, body } = await gw.call('POST', '/admin/restart', { admin: gw.adminToken });
      expect(status).toBe(202);
      expect(body.message).toBeDefined();
    });
  });

  describe('errors', () => {
    it('should answer unknown routes with 404 {error}', async () => {
      const { status, body } = await gw.call('GET', '/nope');
      expect(status).toBe(404);
      expect(body).toEqual({ error: expect.stringContaining('not found') });
    });
  });

  describe('health', () => {
    it('should report liveness and readiness', async () => {
      expect(await gw.call('GET', '/health')).toEqual({ status: 200, body: { status: 'ok', version: expect.any(String), commit: expect.any(String) } });
      const ready = await gw.call('GET', '/ready');
      expect(ready.status).toBe(200);
      // The harness's bus is the in-process one: nothing to ping, and /ready says so instead of `nats: ok`.
      expect(ready.body).toEqual({ status: 'ok', checks: { postgres: 'ok', bus: 'in-process' } });
    });
  });
});
