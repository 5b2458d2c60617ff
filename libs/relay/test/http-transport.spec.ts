import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookRow } from '@gw/persistence';
import { SsrfGuard } from '@gw/platform';
import { generateWebhookSecret, HttpTransport, type SinkMessage } from '@gw/relay';

const message: SinkMessage = {
  id: 'evt_1',
  event: { id: '1', instanceId: 'i1', eventType: 'messages', chatId: '', payload: {} },
  envelope: {},
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
      if (Number.isFinite(answerAfterMs)) setTimeout(() => response.end('ok'), answerAfterMs);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
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
});
