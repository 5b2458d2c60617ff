import { Stack } from './support/stack';

/**
 * Two real uazapiGO clients (a TypeScript SDK and a CLI) send `Content-Type: application/json` on every
 * request, also with no body; Fastify's parser answered those 400 `Body cannot be empty…` before any
 * handler ran. Each call they made that failed so, made the same way here, must now succeed.
 */
describe('a JSON content type with no body (what real uazapi clients send)', () => {
  const stack = new Stack();
  const json = { 'content-type': 'application/json' };

  beforeAll(() => stack.start());
  afterAll(() => stack.stop());

  it('should treat the empty body as {} on every route those clients call without one', async () => {
    const { token, phone } = await stack.connectedInstance('bodyless');
    // fetch sends no body at all with a GET (the header alone), an empty one with the other methods.
    const call = (method: string, path: string, auth: { token?: string; admin?: string }) =>
      stack.gw.call(method, path, { ...auth, raw: method === 'GET' ? undefined : '', headers: json });

    // Reading first, then what changes the instance, then what ends it.
    expect(await call('GET', '/sender/listfolders?status=Active', { token })).toMatchObject({ status: 200 });
    expect(await call('GET', '/sender/listfolders?status=Archived', { token })).toMatchObject({ status: 200 });
    expect(await call('POST', '/sender/cleardone', { token })).toMatchObject({ status: 200 });
    expect(await call('DELETE', '/sender/clearall', { token })).toMatchObject({ status: 200 });
    expect(await call('DELETE', '/message/async', { token })).toMatchObject({ status: 200 });
    expect(await call('DELETE', '/instance/proxy', { token })).toMatchObject({ status: 200 });
    // The SDK's plain QR call: connect with no arguments (already connected: it answers the status).
    expect(await call('POST', '/instance/connect', { token })).toMatchObject({ status: 200 });
    expect((await call('POST', '/admin/restart', { admin: stack.gw.adminToken })).status).toBeLessThan(300);
    expect(await call('POST', '/instance/disconnect', { token })).toMatchObject({ status: 200 });
    expect(await call('DELETE', '/instance', { token })).toMatchObject({ status: 200, body: { response: 'Instance Deleted' } });
    expect(phone).toBeTruthy();
  }, 90_000);

  it('should still refuse a body that is not a JSON object, and malformed JSON, with a 4xx', async () => {
    const { token } = await stack.gw.createInstance('bodyless-2');
    expect(await stack.gw.call('POST', '/send/text', { token, raw: '{"number":', headers: json })).toMatchObject({
      status: 400,
      body: { error: 'Malformed JSON body' },
    });
    const text = await stack.gw.call('POST', '/send/text', { token, raw: 'number=1', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBeGreaterThanOrEqual(400);
    expect(text.status).toBeLessThan(500);
  });
});
