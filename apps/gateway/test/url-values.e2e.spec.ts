import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

/**
 * What a URL carries, checked once for every route before any guard or query: NUL characters, lone
 * surrogates, bad percent-encoding and over-long values in path and query parameters are a 400
 * `{error}` from the catalogue, never a 500 or Fastify's own error body.
 */
describe('path and query values (every route, before any query)', () => {
  let gw: GatewayHarness;
  let token: string;

  beforeAll(async () => {
    // As deployed: with the console's build served (its static files are a Fastify plugin, which once made
    // every route registered before it answer Fastify's own error body).
    const consoleDir = mkdtempSync(join(tmpdir(), 'url-values-console-'));
    mkdirSync(join(consoleDir, 'assets'));
    writeFileSync(join(consoleDir, 'index.html'), '<!DOCTYPE html><title>console</title>');
    writeFileSync(join(consoleDir, 'assets', 'app-1a2b.js'), 'void 0;');
    gw = await startGateway({ env: { CONSOLE_DIR: consoleDir } });
    ({ token } = await gw.createInstance('url-values'));
  });

  afterAll(() => gw.close());

  /** Raw request: the URL goes out exactly as written (fetch would normalise it). */
  const send = async (method: string, path: string, headers: Record<string, string> = {}, body?: string) => {
    const response = await request(`${gw.baseUrl}${path}`, { method: method as never, headers, body });
    const text = await response.body.text();
    return { status: response.statusCode, body: JSON.parse(text) as Record<string, unknown> };
  };

  it.each([
    ['a NUL in the Chatwoot webhook instance (no token, no rate limit)', 'POST', '/chatwoot/webhook/a%00b/x'],
    ['a NUL in the Chatwoot webhook secret', 'POST', '/chatwoot/webhook/r0000000000000/a%00b'],
    ['a NUL in a quick reply id', 'GET', '/quick-replies/a%00b'],
    ['a NUL in a file id', 'GET', '/files/a%00b'],
    ['a lone surrogate in a path parameter', 'GET', '/quick-replies/a%ED%A0%80b'],
    ['bad percent-encoding in a path parameter', 'GET', '/quick-replies/a%E0%A4%A'],
    ['bad percent-encoding in an unknown path', 'GET', '/nope%E0%A4%A'],
    ['an over-long path parameter', 'GET', `/quick-replies/${'x'.repeat(5000)}`],
    ['a NUL in a query value', 'GET', '/group/list?force=%00'],
    ['a NUL in a query name', 'GET', '/group/list?f%00rce=true'],
    ['a NUL in the SSE token', 'GET', '/sse?token=a%00b'],
    ['a NUL in one of a repeated query value', 'GET', '/contacts?contactScope=all&contactScope=a%00'],
    ['an over-long query value', 'GET', `/contacts?contactScope=${'x'.repeat(4000)}`],
    ['a NUL in a query value of a route outside the API', 'GET', '/metrics?x=%00'],
  ])('should answer %s with a 400 {error}', async (_name, method, path) => {
    const headers: Record<string, string> = { token, 'content-type': 'application/json' };
    const answer = await send(method, path, headers, method === 'POST' ? '{}' : undefined);
    expect(answer.status).toBe(400);
    expect(Object.keys(answer.body)).toEqual(['error']);
    expect(answer.body.error).toMatch(/NUL|surrogate|percent-encoding|longer than/);
  });

  it("should still serve the console's page and files", async () => {
    const page = await request(`${gw.baseUrl}/manager/instances`);
    expect(page.statusCode).toBe(200);
    expect(await page.body.text()).toContain('<title>console</title>');
    const asset = await request(`${gw.baseUrl}/manager/assets/app-1a2b.js`);
    expect(asset.statusCode).toBe(200);
    expect(await asset.body.text()).toBe('void 0;');
  });

  it('should still take sane path and query values', async () => {
    expect((await send('GET', '/quick-replies/r0123456789abcd', { token })).status).toBe(404);
    expect((await send('GET', '/contacts?contactScope=all', { token })).status).toBe(200);
    expect((await send('POST', '/chatwoot/webhook/r0000000000000/cw_x', { 'content-type': 'application/json' }, '{}')).status).toBe(404);
  });
});
