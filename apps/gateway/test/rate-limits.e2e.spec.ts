import { request as httpRequest } from 'node:http';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

/**
 * Per-token rate limits over HTTP: one tenant's flood is answered 429 with Retry-After while another
 * tenant, the admin and the health probes are still served; the same for the admin token and for bad tokens.
 */
describe('rate limits (HTTP)', () => {
  let gw: GatewayHarness;
  let flooder: string;
  let quiet: string;
  let idle: string;

  beforeAll(async () => {
    // Slow refills (one every 10 s) so a slow machine cannot earn tokens back between the suite's floods.
    gw = await startGateway({ env: { RATE_LIMIT_INSTANCE: '6/m,burst=5', RATE_LIMIT_ADMIN: '6/m,burst=8', RATE_LIMIT_UNAUTHENTICATED: '6/m,burst=3' } });
    ({ token: flooder } = await gw.createInstance('flooder'));
    ({ token: quiet } = await gw.createInstance('quiet'));
    // Never used before the bad-token flood: no bucket of its own when it comes.
    ({ token: idle } = await gw.createInstance('idle'));
  }, 60_000);
  afterAll(() => gw.close());

  const statuses = (count: number, send: () => Promise<Response>) => Promise.all(Array.from({ length: count }, send));
  const status = (token: string) => fetch(`${gw.baseUrl}/instance/status`, { headers: { token } });

  it('should refuse one instance token beyond its burst and keep serving another', async () => {
    const flood = await statuses(12, () => status(flooder));
    expect(flood.filter((response) => response.status === 200)).toHaveLength(5);
    const refused = flood.filter((response) => response.status === 429);
    expect(refused).toHaveLength(7);
    expect(Number(refused[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused[0].json()).toEqual({ error: 'Too many requests' });

    const other = await status(quiet);
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-limit')).toBe('5');
    expect(other.headers.get('ratelimit-remaining')).toBe('4');
    expect((await gw.call('GET', '/health')).status).toBe(200);
    expect((await status(flooder)).status).toBe(429);
  });

  it('should refuse a token over its limit before reading or parsing its body', async () => {
    await statuses(6, () => status(flooder));
    // A malformed body is not parsed: 429, not 400.
    const malformed = await fetch(`${gw.baseUrl}/send/text`, {
      method: 'POST',
      headers: { token: flooder, 'content-type': 'application/json' },
      body: '{"number": ',
    });
    expect(malformed.status).toBe(429);
    expect(await malformed.json()).toEqual({ error: 'Too many requests' });
    // A body still arriving is not waited for: the answer comes while the client is still sending.
    const pending = httpRequest(`${gw.baseUrl}/send/text`, {
      method: 'POST',
      headers: { token: flooder, 'content-type': 'application/json', 'content-length': '1000000' },
    });
    try {
      const answered = await new Promise<{ status?: number; retryAfter?: string }>((resolve, reject) => {
        pending.on('response', (response) => {
          response.resume();
          resolve({ status: response.statusCode, retryAfter: response.headers['retry-after'] as string | undefined });
        });
        pending.on('error', reject);
        pending.write('{"number": "5511999999999", "text": "');
        setTimeout(() => reject(new Error('no answer while the body was still being sent')), 3_000);
      });
      expect(answered.status).toBe(429);
      expect(Number(answered.retryAfter)).toBeGreaterThanOrEqual(1);
    } finally {
      pending.destroy();
    }
    expect((await status(quiet)).status).toBe(200);
  });

  it('should refuse the admin token beyond its burst while instances are served', async () => {
    // Three instance creations already spent three of the eight.
    const flood = await statuses(10, () => fetch(`${gw.baseUrl}/instance/all`, { headers: { admintoken: gw.adminToken } }));
    expect(flood.filter((response) => response.status === 200)).toHaveLength(5);
    const refused = flood.filter((response) => response.status === 429);
    expect(refused).toHaveLength(5);
    expect(Number(refused[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused[0].json()).toEqual({ error: 'Too many requests' });
    expect((await status(quiet)).status).toBe(200);
  });

  it('should answer a flood of bad tokens 429 from the same address, and still serve a known token', async () => {
    const flood = await statuses(6, () => status('00000000-0000-0000-0000-000000000000'));
    expect(flood.map((response) => response.status).sort()).toEqual([401, 401, 401, 429, 429, 429]);
    expect((await fetch(`${gw.baseUrl}/instance/all`, { headers: { admintoken: 'wrong' } })).status).toBe(429);
    expect((await fetch(`${gw.baseUrl}/instance/status`)).status).toBe(429);
    expect((await status(quiet)).status).toBe(200);
  });

  it("should not believe X-Forwarded-For when no proxy is trusted (TRUST_PROXY empty): the socket's address is the client", async () => {
    const claimed = await fetch(`${gw.baseUrl}/instance/status`, {
      headers: { token: '00000000-0000-0000-0000-000000000000', 'x-forwarded-for': '203.0.113.9' },
    });
    expect(claimed.status).toBe(429);
  });

  it('should serve a valid token first seen while its address is over the limit for bad tokens, and keep refusing bad ones', async () => {
    const flood = await statuses(4, () => status('00000000-0000-0000-0000-000000000000'));
    expect(flood.some((response) => response.status === 429)).toBe(true);
    // Other clients' failures (behind one proxy: the same address) never refuse a valid token.
    const fresh = await status(idle);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('ratelimit-remaining')).toBe('4');
    expect((await status('00000000-0000-0000-0000-000000000001')).status).toBe(429);
  });

  it('should never limit the probes and the API documents', async () => {
    const answers = await statuses(30, () => fetch(`${gw.baseUrl}/health`));
    expect(answers.every((response) => response.status === 200)).toBe(true);
    expect((await fetch(`${gw.baseUrl}/openapi.json`)).status).toBe(200);
  });
});

/**
 * Behind a proxy named in TRUST_PROXY the client's address is the one that proxy put in X-Forwarded-For:
 * each client has its own allowance for bad tokens, and the audit log records that address.
 */
describe('rate limits behind a trusted proxy (TRUST_PROXY)', () => {
  let gw: GatewayHarness;

  beforeAll(async () => {
    gw = await startGateway({ env: { RATE_LIMIT_UNAUTHENTICATED: '6/m,burst=3', TRUST_PROXY: '127.0.0.1' } });
  }, 60_000);
  afterAll(() => gw.close());

  const badToken = (client: string) =>
    fetch(`${gw.baseUrl}/instance/status`, { headers: { token: '00000000-0000-0000-0000-000000000000', 'x-forwarded-for': `198.51.100.77, ${client}` } });

  it('should count bad tokens per client address, the last one the proxy added', async () => {
    const flood = await Promise.all(Array.from({ length: 5 }, () => badToken('203.0.113.1')));
    expect(flood.map((response) => response.status).sort()).toEqual([401, 401, 401, 429, 429]);
    // Another client behind the same proxy (and with the same forged first entry) still has its allowance.
    expect((await badToken('203.0.113.2')).status).toBe(401);
  });

  it("should record the client's address in the audit log", async () => {
    const created = await fetch(`${gw.baseUrl}/instance/init`, {
      method: 'POST',
      headers: { admintoken: gw.adminToken, 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.7' },
      body: JSON.stringify({ name: 'behind-proxy' }),
    });
    expect(created.status).toBe(200);
    const audit = await gw.call('GET', '/admin/audit?action=instance.create', { admin: gw.adminToken });
    expect((audit.body as { entries: Array<{ address: string }> }).entries[0].address).toBe('203.0.113.7');
  });
});
