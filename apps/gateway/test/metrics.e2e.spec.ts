import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { nextPhone, Stack } from './support/stack';

/** GET /metrics and GET /version over HTTP, on the whole stack with a connected instance. */
describe('observability (GET /metrics, GET /version)', () => {
  const stack = new Stack();
  let token: string;
  let contact: string;

  const scrape = async (headers: Record<string, string> = {}) => {
    const response = await fetch(`${stack.gw.baseUrl}/metrics`, { headers });
    return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
  };
  /** The value of one sample (`name{labels}`), or undefined. */
  const sample = (text: string, series: string) => {
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  beforeAll(async () => {
    await stack.start();
    ({ token } = await stack.connectedInstance('metrics'));
    contact = nextPhone('5541');
    await stack.control('POST', '/sim/accounts', { phone: contact, name: 'Cliente' });
  }, 60_000);

  afterAll(() => stack.stop());

  it('should show a send by type and outcome, its latency, HTTP requests by route pattern and instances by status', async () => {
    const before = await scrape();
    const sentBefore = sample(before.text, 'wa_gateway_sends_total{type="text",outcome="sent"}') ?? 0;
    const sent = await stack.gw.call('POST', '/send/text', { token, body: { number: contact, text: 'metrics' } });
    expect(sent.status).toBe(200);
    await stack.gw.call('GET', '/files/not-a-file-id');

    const { status, contentType, text } = await scrape();
    expect(status).toBe(200);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(text, 'wa_gateway_sends_total{type="text",outcome="sent"}')).toBe(sentBefore + 1);
    expect(sample(text, 'wa_gateway_send_duration_seconds_count{type="text",outcome="sent"}')).toBe(sentBefore + 1);
    expect(text).toMatch(/^wa_gateway_send_duration_seconds_bucket\{le="0\.25",type="text",outcome="sent"\} \d+$/m);
    expect(sample(text, 'wa_gateway_http_requests_total{method="POST",route="/send/text",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^wa_gateway_http_request_duration_seconds_count\{method="POST",route="\/send\/text",status="200"\} \d+$/m);
    // The pattern, never the URL.
    expect(text).toMatch(/route="\/files\/:id",status="404"/);
    expect(text).not.toContain('not-a-file-id');
    expect(sample(text, 'wa_gateway_instances{status="connected"}')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^wa_gateway_bus_request_duration_seconds_count\{op="send",outcome="ok"\} \d+$/m);
    expect(sample(text, 'wa_gateway_db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
    expect(text).toContain('process_resident_memory_bytes');
    // No instance id or token in any label.
    expect(text).not.toContain(token);
  });

  it('should answer the version', async () => {
    const { status, body } = await stack.gw.call('GET', '/version');
    expect(status).toBe(200);
    expect(body).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/), commit: expect.any(String), node: process.version });
    const health = await stack.gw.call('GET', '/health');
    expect(health.body).toEqual({ status: 'ok', version: body.version, commit: body.commit });
  });

  describe('with METRICS_TOKEN', () => {
    const metricsToken = 'metrics-token-0123456789abcdef';
    let gw: GatewayHarness;

    beforeAll(async () => {
      gw = await startGateway({ db: stack.db, env: { METRICS_TOKEN: metricsToken } });
    });
    afterAll(() => gw?.close());

    it('should refuse a scrape without the bearer token, or with another', async () => {
      for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789abcdef' }, { authorization: metricsToken }]) {
        const response = await fetch(`${gw.baseUrl}/metrics`, { headers });
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(await response.json()).toEqual({ error: 'Invalid token' });
      }
    });

    it('should answer the scrape with it', async () => {
      const response = await fetch(`${gw.baseUrl}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('wa_gateway_http_requests_total');
    });
  });
});
