import { startGateway, type GatewayHarness } from './support/gateway-harness';

/**
 * Tokens in the query string (issue 36): `?token=` on every instance route and `?admintoken=` on every
 * admin route when the header is absent, the header winning when both are sent; the per-token limit
 * before the body and the per-address limit for failures count them as they count the headers.
 */
describe('tokens in the query string (HTTP)', () => {
  let gw: GatewayHarness;
  let token: string;
  let other: string;
  let flooder: string;

  beforeAll(async () => {
    gw = await startGateway({ env: { RATE_LIMIT_INSTANCE: '60/m,burst=5', RATE_LIMIT_UNAUTHENTICATED: '60/m,burst=4' } });
    ({ token } = await gw.createInstance('query-token'));
    ({ token: other } = await gw.createInstance('query-other'));
    ({ token: flooder } = await gw.createInstance('query-flooder'));
  }, 60_000);
  afterAll(() => gw.close());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${gw.baseUrl}${path}`, { headers });

  it('should open instance routes with ?token= and admin routes with ?admintoken=', async () => {
    const status = await get(`/instance/status?token=${token}`);
    expect(status.status).toBe(200);
    expect(((await status.json()) as { instance: { name: string } }).instance.name).toBe('query-token');
    const sent = await fetch(`${gw.baseUrl}/chat/find?token=${token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(sent.status).toBe(200);
    const all = await get(`/instance/all?admintoken=${gw.adminToken}`);
    expect(all.status).toBe(200);
    expect(((await all.json()) as { name: string }[]).map((instance) => instance.name)).toEqual(
      expect.arrayContaining(['query-token', 'query-other', 'query-flooder']),
    );
    // Each token opens only its own kind of route, in the query as in the header.
    expect((await get(`/instance/all?token=${token}`)).status).toBe(403);
    expect((await get(`/instance/status?admintoken=${gw.adminToken}`)).status).toBe(401);
  });

  it('should let the header win when both are sent', async () => {
    const byHeader = await get(`/instance/status?token=${other}`, { token });
    expect(byHeader.status).toBe(200);
    expect(((await byHeader.json()) as { instance: { name: string } }).instance.name).toBe('query-token');
    expect((await get(`/instance/status?token=${token}`, { token: 'not-a-token' })).status).toBe(401);
    expect((await get(`/instance/all?admintoken=wrong`, { admintoken: gw.adminToken })).status).toBe(200);
    expect((await get(`/instance/all?admintoken=${gw.adminToken}`, { admintoken: 'wrong' })).status).toBe(403);
  });

  it('should refuse a query token over its limit before its body is read', async () => {
    const flood = await Promise.all(Array.from({ length: 8 }, () => get(`/instance/status?token=${flooder}`)));
    expect(flood.filter((response) => response.status === 429).length).toBeGreaterThan(0);
    // A malformed body is not parsed: 429, not 400.
    const malformed = await fetch(`${gw.baseUrl}/send/text?token=${flooder}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"number": ',
    });
    expect(malformed.status).toBe(429);
    expect(await malformed.json()).toEqual({ error: 'Too many requests' });
  });

  it('should count bad query tokens against the address as bad headers are counted', async () => {
    // The earlier tests spent the address's burst of 4 on failures in part; 10 more cannot all be served.
    const bad = await Promise.all(Array.from({ length: 10 }, (_, index) => get(`/instance/status?token=00000000-0000-0000-0000-00000000000${index}`)));
    const statuses = bad.map((response) => response.status);
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(6);
    expect((await get('/instance/all?admintoken=wrong')).status).toBe(429);
    // A valid token is still served.
    expect((await get(`/instance/status?token=${other}`)).status).toBe(200);
  });
});
