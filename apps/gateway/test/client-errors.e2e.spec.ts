import { connect, type Socket } from 'node:net';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

/**
 * Requests Node's HTTP parser refuses before Fastify has a request (malformed HTTP, a request line and
 * headers over 16 KB, a request not received in time) are answered with the catalogue's `{error}` and
 * the connection closed; Fastify's own answer was `{"error":…,"message":…,"statusCode":…}`.
 */
describe('what the HTTP parser refuses (raw requests over TCP)', () => {
  let gw: GatewayHarness;
  let port: number;

  beforeAll(async () => {
    gw = await startGateway();
    port = Number(new URL(gw.baseUrl).port);
  }, 60_000);
  afterAll(() => gw.close());

  /** Sends `raw` on a new connection and reads until the gateway closes it. */
  const exchange = (raw: string | Buffer) =>
    new Promise<{ status: number; headers: Record<string, string>; body: unknown }>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      // The gateway closes the connection after its answer: what was read until then is the answer.
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const [head, ...rest] = text.split('\r\n\r\n');
        const [statusLine, ...headerLines] = head.split('\r\n');
        const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
        if (!status) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
        const headers = Object.fromEntries(
          headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
        );
        resolve({ status, headers, body: JSON.parse(rest.join('\r\n\r\n')) });
      });
      socket.on('error', () => undefined); // a reset after the answer: 'close' follows
      socket.end(raw);
    });

  it('should answer malformed HTTP with a 400 {error}', async () => {
    for (const raw of [
      'THIS IS NOT HTTP\r\n\r\n',
      'GET /instance/status HTTP/1.1\r\nHost: x\r\nBad Header Without Colon\r\n\r\n',
      'POST /send/text HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n',
      'GET /instance/status HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
    ]) {
      const answer = await exchange(raw);
      expect({ raw, status: answer.status, body: answer.body }).toEqual({ raw, status: 400, body: { error: 'Malformed HTTP request' } });
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.headers.connection).toBe('close');
    }
  });

  it('should answer headers over 16 KB with a 431 {error}', async () => {
    const answer = await exchange(`GET /instance/status HTTP/1.1\r\nHost: x\r\ntoken: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(answer.body).toEqual({ error: 'Request headers too large' });
    // A URL over the limit is the same overflow.
    const longUrl = await exchange(`GET /instance/status?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(longUrl.status).toBe(431);
    expect(longUrl.body).toEqual({ error: 'Request headers too large' });
  });

  it('should answer a request not received in time with a 408 {error}', async () => {
    // Node checks its timeouts every 30 s: the server's own clientError for a connection that stalled
    // mid-headers, as Node raises it then, on a real connection.
    const server = gw.app.getHttpServer();
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write('GET /instance/status HTTP/1.1\r\nHost: x\r\n');
    const serverSide = await accepted;
    server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), serverSide);
    await closed;
    const text = Buffer.concat(chunks).toString('utf8');
    expect(text.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(text.split('\r\n\r\n')[1])).toEqual({ error: 'The request was not received in time' });
  });

  it('should still serve a well-formed request', async () => {
    const answer = await exchange('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(200);
  });
});
