import { createLogger } from '@gw/platform';
import { Writable } from 'node:stream';
import { Stack, sleep, nextPhone } from './support/stack';

/**
 * A full flow at log level trace (pair by QR, settings with secrets, webhook with its signing secret, a
 * proxy with a password, sends both ways, bad tokens, a database refusal), every log line and everything
 * printed to the console captured, then searched for the secrets the flow planted: none may appear.
 */
describe('secrets never reach a log line', () => {
  const stack = new Stack();
  const captured: string[] = [];
  const printed: string[] = [];
  const planted = {
    openaiKey: 'sk-planted-openai-4c1d9e7a2b6f',
    webhookSecret: 'whsec_cGxhbnRlZC13ZWJob29rLXNlY3JldA==',
    proxyPassword: 'planted-proxy-pass-77aa',
    adminToken: '',
    instanceToken: '',
    chatwootWebhookSecret: '',
  };
  const consoleMethods = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const originals = new Map<string, (...args: unknown[]) => void>();
  const writeStdout = process.stdout.write.bind(process.stdout);
  const writeStderr = process.stderr.write.bind(process.stderr);

  beforeAll(async () => {
    // What the processes print outside the logger (libsignal's session dumps go through console.*).
    for (const method of consoleMethods) {
      originals.set(method, console[method]);
      console[method] = (...args: unknown[]) => void printed.push(args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' '));
    }
    const capture = (write: typeof writeStdout) =>
      ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        printed.push(String(chunk));
        return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof process.stdout.write;
    process.stdout.write = capture(writeStdout);
    process.stderr.write = capture(writeStderr);
    const sink = new Writable({
      write(chunk, _encoding, done) {
        captured.push(String(chunk));
        done();
      },
    });
    await stack.start({}, createLogger('secrets', 'trace', { destination: sink }));
    planted.adminToken = stack.gw.adminToken;
  }, 60_000);

  afterAll(async () => {
    await stack.stop();
    for (const method of consoleMethods) console[method] = originals.get(method)!;
    process.stdout.write = writeStdout;
    process.stderr.write = writeStderr;
  });

  const logText = () => captured.join('');

  it('should log the whole flow without any secret it carried', async () => {
    const { id, token, phone } = await stack.connectedInstance('secrets');
    planted.instanceToken = token;
    const friend = nextPhone();
    await stack.control('POST', '/sim/accounts', { phone: friend, name: 'Friend' });

    const call = (method: string, path: string, body?: unknown) => stack.gw.call(method, path, { token, body });
    expect((await call('POST', '/instance/updatechatbotsettings', { openai_apikey: planted.openaiKey, chatbot_enabled: false })).status).toBe(200);
    expect(
      (await call('POST', '/webhook', { url: 'http://127.0.0.1:9/hook', events: ['messages'], enabled: true, secret: planted.webhookSecret })).status,
    ).toBe(200);
    const sent = await call('POST', '/send/text', { number: friend, text: 'hello from the secrets flow' });
    expect(sent.status).toBe(200);
    await stack.received(friend, sent.body.messageid);
    await stack.control('POST', `/sim/accounts/${friend}/send`, { to: phone, text: 'an answer' });
    await sleep(1_000);
    // A write Postgres refuses while it carries a secret (the statement's parameters hold the key), and requests with bad tokens.
    await stack.db.dataSource.query("ALTER TABLE instances ADD CONSTRAINT secrets_spec_refuse CHECK (chatbot_stop_conversation <> 'refused') NOT VALID");
    try {
      const refused = await call('POST', '/instance/updatechatbotsettings', { openai_apikey: `${planted.openaiKey}-2`, chatbot_stopConversation: 'refused' });
      expect(refused.status).toBeGreaterThanOrEqual(400);
    } finally {
      await stack.db.dataSource.query('ALTER TABLE instances DROP CONSTRAINT secrets_spec_refuse');
    }
    expect(logText()).toContain('secrets_spec_refuse');
    expect((await stack.gw.call('GET', '/instance/status', { token: `${token}x` })).status).toBe(401);
    // Every route that takes a secret in its URL: the Chatwoot webhook (its path), any route's ?token= / ?admintoken=.
    const chatwoot = await call('PUT', '/chatwoot/config', {
      enabled: false,
      url: 'http://127.0.0.1:9',
      access_token: 'cw-access',
      account_id: 1,
      inbox_id: 1,
    });
    expect(chatwoot.status).toBe(200);
    const webhookPath = new URL(chatwoot.body.chatwoot_inbox_webhook_url).pathname;
    planted.chatwootWebhookSecret = webhookPath.split('/').pop()!;
    expect((await stack.gw.call('POST', webhookPath, { body: { event: 'message_created' } })).status).toBe(200);
    expect((await stack.gw.call('POST', `${webhookPath}x`, { body: {} })).status).toBe(404);
    expect((await stack.gw.call('POST', `${webhookPath}/extra`, { body: {} })).status).toBe(404);
    const stream = new AbortController();
    const sse = await fetch(`${stack.gw.baseUrl}/sse?events=messages&token=${token}`, { signal: stream.signal });
    expect(sse.status).toBe(200);
    stream.abort();
    expect((await stack.gw.call('GET', `/sse?token=${token}x`)).status).toBe(401);
    expect((await stack.gw.call('GET', `/instance/status?token=${token}`)).status).toBe(200);
    expect((await stack.gw.call('GET', `/instance/status?token=${token}x`)).status).toBe(401);
    expect((await stack.gw.call('GET', `/instance/all?admintoken=${planted.adminToken}`)).status).toBe(200);
    expect((await stack.gw.call('GET', `/instance/all?admintoken=${planted.adminToken}x`)).status).toBe(403);
    const scraped = await fetch(`${stack.gw.baseUrl}/metrics`).then((response) => response.text());
    expect(scraped).toContain('wa_gateway_http_requests_total');
    expect((await stack.gw.call('GET', '/instance/all', { admin: `${planted.adminToken}x` })).status).toBe(403);
    // Last: a proxy with a password (the session reconnects through it and fails, which is logged too).
    await call('POST', '/instance/proxy', { mode: 'custom', proxy_url: `http://user:${planted.proxyPassword}@127.0.0.1:9` });
    await sleep(1_500);
    expect(id).toBeTruthy();

    const logged = logText();
    const consoleText = printed.join('\n');
    // The flow was logged at all (else the search below proves nothing).
    expect(captured.length).toBeGreaterThan(50);
    expect(logged).toContain('"url":"/send/text"');
    expect(logged).toContain('"url":"/chatwoot/webhook/');
    for (const [name, secret] of Object.entries(planted)) {
      expect(secret.length).toBeGreaterThan(8);
      expect({ name, inLogs: logged.includes(secret), printed: consoleText.includes(secret), inMetrics: scraped.includes(secret) }).toEqual({
        name,
        inLogs: false,
        printed: false,
        inMetrics: false,
      });
    }
    // Signal key material (libsignal's session dumps print `privKey: <Buffer …>`).
    expect(consoleText).not.toMatch(/privKey|Closing (open )?session/);
    expect(logged).not.toMatch(/privKey/);
  }, 120_000);
});
