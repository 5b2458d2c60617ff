import { startGateway, type GatewayHarness } from './support/gateway-harness';

describe('webhook configuration API (HTTP)', () => {
  let gw: GatewayHarness;
  let token: string;

  beforeAll(async () => {
    gw = await startGateway({ env: { SSRF_ALLOWLIST: '127.0.0.0/8' } });
    ({ token } = await gw.createInstance('hooks'));
  });
  afterAll(() => gw.close());

  it('should create the instance webhook in simple mode and show its secret once', async () => {
    const { status, body } = await gw.call('POST', '/webhook', {
      token,
      body: { url: 'http://127.0.0.1:9/hook', events: ['messages', 'connection'], excludeMessages: ['wasSentByApi'] },
    });
    expect(status).toBe(200);
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
      enabled: true,
      events: ['messages', 'connection'],
      excludeMessages: ['wasSentByApi'],
      addUrlEvents: false,
    });
    expect(body[0].secret).toMatch(/^whsec_/);
    const listed = await gw.call('GET', '/webhook', { token });
    expect(listed.body[0].secret).toBeUndefined();
  });

  it('should update the one webhook in simple mode', async () => {
    const { body } = await gw.call('POST', '/webhook', { token, body: { url: 'http://127.0.0.1:9/other', addUrlEvents: true } });
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({ url: 'http://127.0.0.1:9/other', addUrlEvents: true, events: ['messages', 'connection'] });
  });

  it('should add, update and delete in advanced mode', async () => {
    const added = await gw.call('POST', '/webhook', { token, body: { action: 'add', url: 'http://127.0.0.1:9/second', events: ['presence'] } });
    expect(added.body).toHaveLength(2);
    const second = added.body.find((hook: { url: string }) => hook.url.endsWith('/second'));
    const updated = await gw.call('POST', '/webhook', { token, body: { action: 'update', id: second.id, enabled: false } });
    expect(updated.body.find((hook: { id: string }) => hook.id === second.id).enabled).toBe(false);
    const deleted = await gw.call('POST', '/webhook', { token, body: { action: 'delete', id: second.id } });
    expect(deleted.body).toHaveLength(1);
    expect((await gw.call('POST', '/webhook', { token, body: { action: 'delete', id: 'nope' } })).status).toBe(404);
    expect((await gw.call('POST', '/webhook', { token, body: { action: 'delete' } })).status).toBe(400);
  });

  it('should refuse URLs the SSRF guard refuses, and non-http schemes', async () => {
    const metadata = await gw.call('POST', '/webhook', { token, body: { action: 'add', url: 'http://169.254.169.254/latest' } });
    expect(metadata.status).toBe(400);
    expect(metadata.body.error).toMatch(/private or reserved/);
    expect((await gw.call('POST', '/webhook', { token, body: { action: 'add', url: 'ftp://example.com/x' } })).status).toBe(400);
    expect((await gw.call('POST', '/webhook', { token, body: { action: 'add', url: 'http://10.0.0.5/x' } })).status).toBe(400);
  });

  it('should refuse unknown events and exclusions', async () => {
    expect((await gw.call('POST', '/webhook', { token, body: { url: 'http://127.0.0.1:9/h', events: ['nope'] } })).status).toBe(400);
    expect((await gw.call('POST', '/webhook', { token, body: { url: 'http://127.0.0.1:9/h', excludeMessages: ['sometimes'] } })).status).toBe(400);
    expect((await gw.call('POST', '/webhook', { token, body: { url: 'http://127.0.0.1:9/h', events: 'messages' } })).status).toBe(400);
  });

  it('should answer the error log as a list', async () => {
    const { status, body } = await gw.call('GET', '/webhook/errors', { token });
    expect(status).toBe(200);
    expect(body).toEqual([]);
  });

  describe('global webhook (admin)', () => {
    it('should answer 404 before one is set', async () => {
      expect(await gw.call('GET', '/globalwebhook', { admin: gw.adminToken })).toEqual({ status: 404, body: { error: 'Global webhook not found' } });
    });

    it('should set and read it, and need events', async () => {
      const global = (body: unknown) => gw.call('POST', '/globalwebhook', { admin: gw.adminToken, body });
      expect(await global({ url: 'http://127.0.0.1:9/g' })).toEqual({ status: 400, body: { error: 'events is required' } });
      expect(await global({ events: ['connection'] })).toEqual({ status: 400, body: { error: 'url is required' } });
      expect(await global({ url: '', events: ['connection'] })).toEqual({ status: 400, body: { error: 'url is required' } });
      expect(await global({ url: 'http://127.0.0.1:9/g', events: 'connection' })).toEqual({
        status: 400,
        body: { error: 'events must be an array of event names' },
      });
      const { status, body } = await gw.call('POST', '/globalwebhook', { admin: gw.adminToken, body: { url: 'http://127.0.0.1:9/g', events: ['connection'] } });
      expect(status).toBe(200);
      expect(body).toMatchObject({ url: 'http://127.0.0.1:9/g', events: ['connection'] });
      expect((await gw.call('GET', '/globalwebhook', { admin: gw.adminToken })).body.url).toBe('http://127.0.0.1:9/g');
    });

    it('should keep instance tokens out', async () => {
      expect((await gw.call('GET', '/globalwebhook', { token })).status).toBe(403);
      expect((await gw.call('GET', '/globalwebhook/errors', { admin: gw.adminToken })).status).toBe(200);
    });
  });
});
