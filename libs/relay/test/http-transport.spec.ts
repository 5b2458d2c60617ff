import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookRow } from '@gw/persistence';
import { SsrfGuard } from '@gw/platform';
import { generateWebhookSecret, HttpTransport, type SinkMessage } from '@gw/relay';

// The module object itself (an `import * as` is a copy, which a spy would not reach).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dnsPromises = require('node:dns/promises') as typeof import('node:dns/promises');

const message: SinkMessage = {
  id: 'evt_1',
  event: { id: '1', instanceId: 'i1', eventType: 'messages', chatId: '', payload: {} },
  body: '{}',
};

const webhookAt = (url: string): WebhookRow => ({
  id: 'w1',
  instanceId: 'i1',
  kind: 'webhook',
  options: {},
  url,
  enabled: true,
  events: [],
  excludeMessages: [],
  addUrlEvents: false,
  addUrlTypesMessages: false,
  includeToken: false,
  secret: generateWebhookSecret(),
  failingSince: null,
  disabledReason: '',
  created: new Date(),
  updated: new Date(),
});

/** The request's deadline (its own timer, cleared when the request ends: issue #38) still bounds the whole request. */
describe('HttpTransport deadline', () => {
  let server: Server;
  let url = '';
  let answerAfterMs = 0;
  let transport: HttpTransport;

  beforeAll(async () => {
    // Answers after `answerAfterMs`, or never (Infinity).
    server = createServer((request, response) => {
      request.resume();
      if (request.url === '/busy') return void response.writeHead(503, { 'Retry-After': '7' }).end('busy');
      if (request.url === '/gone') return void response.writeHead(410).end();
      if (request.url === '/trickle') {
        // Headers at once, then a body that never ends: the deadline bounds the body too.
        response.writeHead(200);
        const tick = setInterval(() => response.write('.'), 50);
        response.on('close', () => clearInterval(tick));
        return;
      }
      if (Number.isFinite(answerAfterMs)) setTimeout(() => response.end('ok'), answerAfterMs);
    });
    // Every local address (IPv4 and IPv6): `localhost` may resolve to either.
    await new Promise<void>((resolve) => server.listen(0, resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    transport = new HttpTransport({ ssrf: SsrfGuard.fromList('127.0.0.0/8'), requestTimeoutMs: 400 });
  });
  afterAll(async () => {
    await transport.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('should give up on a receiver that never answers after requestTimeoutMs, as timed out', async () => {
    answerAfterMs = Infinity;
    const started = Date.now();
    const outcome = await transport.send(webhookAt(url), message);
    const elapsed = Date.now() - started;
    expect(outcome).toMatchObject({ ok: false, statusCode: null, error: 'timed out' });
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(5_000);
  });

  it('should deliver to a receiver that answers within the deadline, and the next request gets a deadline of its own', async () => {
    answerAfterMs = 250;
    // Two in a row, each under the 400 ms deadline but 500 ms together.
    expect(await transport.send(webhookAt(url), message)).toMatchObject({ ok: true, statusCode: 200 });
    expect(await transport.send(webhookAt(url), message)).toMatchObject({ ok: true, statusCode: 200 });
  });

  it('should give up on a receiver whose body never ends after requestTimeoutMs, as timed out', async () => {
    const started = Date.now();
    const outcome = await transport.send(webhookAt(url.replace('/hook', '/trickle')), message);
    expect(outcome).toMatchObject({ ok: false, statusCode: null, error: 'timed out' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
  });

  it("should report a refusal's status and Retry-After, and a 410 as gone", async () => {
    expect(await transport.send(webhookAt(url.replace('/hook', '/busy')), message)).toMatchObject({
      ok: false,
      statusCode: 503,
      error: 'receiver answered 503',
      retryAfterMs: 7_000,
    });
    expect(await transport.send(webhookAt(url.replace('/hook', '/gone')), message)).toMatchObject({ ok: false, statusCode: 410, gone: expect.any(String) });
    // The connection is still good for the next delivery.
    answerAfterMs = 0;
    expect(await transport.send(webhookAt(url), message)).toMatchObject({ ok: true, statusCode: 200 });
  });

  it("should check a named receiver's addresses when connecting, with no DNS lookup of its own per delivery", async () => {
    answerAfterMs = 0;
    const port = (server.address() as AddressInfo).port;
    const lookups = jest.spyOn(dnsPromises, 'lookup');
    const named = new HttpTransport({ ssrf: SsrfGuard.fromList('127.0.0.0/8,::1/128'), requestTimeoutMs: 2_000 });
    try {
      for (let n = 0; n < 3; n++) expect(await named.send(webhookAt(`http://localhost:${port}/hook`), message)).toMatchObject({ ok: true });
      expect(lookups).not.toHaveBeenCalled();
    } finally {
      lookups.mockRestore();
      await named.close();
    }
  });

  it('should refuse a private receiver, by name or by address, unless allowlisted', async () => {
    answerAfterMs = 0;
    const port = (server.address() as AddressInfo).port;
    const guarded = new HttpTransport({ ssrf: new SsrfGuard(), requestTimeoutMs: 2_000 });
    try {
      for (const host of ['localhost', '127.0.0.1', '[::1]', '0x7f000001']) {
        expect(await guarded.send(webhookAt(`http://${host}:${port}/hook`), message)).toMatchObject({ ok: false, error: expect.stringMatching(/SSRF guard/) });
      }
      expect(await guarded.send(webhookAt(`http://user:pw@example.com:${port}/hook`), message)).toMatchObject({
        ok: false,
        error: expect.stringMatching(/SSRF guard: URL must not carry credentials/),
      });
    } finally {
      await guarded.close();
    }
  });
});
