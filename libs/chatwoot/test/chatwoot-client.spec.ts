import { guardedLookup, SsrfGuard } from '@gw/platform';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { ChatwootClient, ChatwootError, MAX_ANSWER_BYTES, MAX_RETRY_AFTER_MS, retryAfterMs } from '../src/chatwoot-client';

describe(ChatwootClient.name, () => {
  let server: Server;
  let url: string;
  let seen: Array<{ method: string; path: string; headers: IncomingHttpHeaders; body: string }>;
  let status = 200;
  const agents: Agent[] = [];
  const clientWith = (allowlist: string[]) => {
    const guard = new SsrfGuard(allowlist);
    const agent = new Agent({ connect: { lookup: guardedLookup(guard) } });
    agents.push(agent);
    return new ChatwootClient({ url: `${url}/`, accessToken: 'secret-token', accountId: 4 }, agent, 2_000, guard);
  };

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
        if (request.url?.startsWith('/redirect/')) {
          response.writeHead(302, { location: decodeURIComponent(request.url.slice('/redirect/'.length)) });
          return response.end();
        }
        if (request.url?.includes('q=huge')) {
          // An answer far larger than any of Chatwoot's, without a Content-Length (chunked).
          response.writeHead(200, { 'content-type': 'application/json' });
          response.write(`{"payload":"${'x'.repeat(MAX_ANSWER_BYTES)}`);
          return response.end('"}');
        }
        if (request.url?.startsWith('/files/')) {
          response.writeHead(200, { 'content-type': 'image/png' });
          return response.end(Buffer.from('png-bytes'));
        }
        const extra = status === 429 ? { 'retry-after': '7' } : status >= 300 && status < 400 ? { location: `${url}/elsewhere` } : {};
        response.writeHead(status, { 'content-type': 'application/json', ...extra });
        response.end(JSON.stringify({ id: 9, payload: [] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    seen = [];
    status = 200;
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.close()));
    await new Promise((resolve) => server.close(resolve));
  });

  it("should call the account's Application API with the access token", async () => {
    const sut = clientWith(['127.0.0.0/8']);
    await sut.toggleStatus(12, 'resolved');
    expect(seen).toEqual([
      expect.objectContaining({ method: 'POST', path: '/api/v1/accounts/4/conversations/12/toggle_status', body: JSON.stringify({ status: 'resolved' }) }),
    ]);
    expect(seen[0].headers.api_access_token).toBe('secret-token');
  });

  it('should refuse a private address the SSRF guard does not allow, by literal IP or by name, without calling it', async () => {
    const error = await clientWith([])
      .searchContacts('5511')
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ChatwootError);
    expect((error as ChatwootError).message).toMatch(/refused by the SSRF guard/);
    const guard = new SsrfGuard([]);
    const agent = new Agent({ connect: { lookup: guardedLookup(guard) } });
    agents.push(agent);
    const byName = new ChatwootClient({ url: url.replace('127.0.0.1', 'localhost'), accessToken: 't', accountId: 4 }, agent, 2_000, guard);
    expect(await byName.searchContacts('5511').catch((caught: unknown) => (caught as Error).message)).toMatch(/refused by the SSRF guard/);
    expect(seen).toEqual([]);
  });

  it.each([301, 302, 307, 308])('should not follow a %s of the API, so the token goes nowhere else', async (code) => {
    status = code;
    const error = await clientWith(['127.0.0.0/8'])
      .searchContacts('5511')
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ChatwootError);
    expect(error).toMatchObject({ status: code, retryable: false, message: expect.stringMatching(/redirect, which is not followed/) });
    expect(seen.map((request) => request.path)).toEqual(['/api/v1/accounts/4/contacts/search?q=5511&include_contact_inboxes=true']);
  });

  it('should download an attachment through its redirects, each hop through the SSRF guard, without the token', async () => {
    const sut = clientWith(['127.0.0.0/8']);
    const file = await sut.download(`${url}/redirect/${encodeURIComponent('/files/7/foto.png')}`, 1_000);
    expect(file).toEqual({ data: Buffer.from('png-bytes'), fileName: 'foto.png', mimetype: 'image/png' });
    expect(seen.every((request) => request.headers.api_access_token === undefined)).toBe(true);
    await expect(sut.download(`${url}/redirect/${encodeURIComponent('http://169.254.169.254/latest/meta-data')}`, 1_000)).rejects.toThrow(/SSRF/);
    await expect(sut.download(`${url}/files/7/foto.png`, 4)).rejects.toThrow(/larger than/);
  });

  it('should create a message with attachments as multipart, its content_attributes as nested fields Rails reads as a hash', async () => {
    const sut = clientWith(['127.0.0.0/8']);
    await sut.createMessage(12, { content: 'foto', message_type: 'incoming', source_id: 'WAID:ABC', content_attributes: { in_reply_to: 40 } }, [
      { data: Buffer.from('png-bytes'), fileName: 'a.png', mimetype: 'image/png' },
    ]);
    expect(seen[0]).toMatchObject({ method: 'POST', path: '/api/v1/accounts/4/conversations/12/messages' });
    expect(String(seen[0].headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
    expect(seen[0].body).toContain('name="content_attributes[in_reply_to]"\r\n\r\n40\r\n');
    expect(seen[0].body).toContain('name="source_id"\r\n\r\nWAID:ABC\r\n');
    expect(seen[0].body).toMatch(/name="attachments\[\]"; filename="a.png"\r\nContent-Type: image\/png\r\n\r\npng-bytes/);
  });

  it('should tell retryable failures (5xx, 401/403, 429 with Retry-After) from refusals that will repeat', async () => {
    const sut = clientWith(['127.0.0.0/8']);
    const failure = async (code: number) => {
      status = code;
      return (await sut.deleteMessage(1, 2).catch((caught: unknown) => caught)) as ChatwootError;
    };
    expect(await failure(503)).toMatchObject({ status: 503, retryable: true });
    expect(await failure(401)).toMatchObject({ status: 401, retryable: true });
    expect(await failure(429)).toMatchObject({ status: 429, retryable: true, retryAfterMs: 7_000 });
    expect(await failure(422)).toMatchObject({ status: 422, retryable: false });
  });

  it('should read Retry-After as seconds or an HTTP date, and cap it at an hour', () => {
    const now = Date.parse('2026-11-25T10:00:00Z');
    expect(retryAfterMs('7', now)).toBe(7_000);
    expect(retryAfterMs('Wed, 25 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('999999999', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(retryAfterMs('Thu, 01 Jan 2099 00:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_MS);
    for (const unusable of [null, '', '0', '-5', 'soon', 'Wed, 25 Nov 2026 09:00:00 GMT']) expect(retryAfterMs(unusable, now)).toBeUndefined();
  });

  it("should refuse an answer larger than any of Chatwoot's instead of reading it all", async () => {
    const failure = await clientWith(['127.0.0.0/8'])
      .searchContacts('huge')
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ChatwootError);
    expect((failure as ChatwootError).message).toMatch(/larger than 4 MB/);
  });
});
