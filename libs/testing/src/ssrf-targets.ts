import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';

/**
 * The SSRF matrix's loopback world: one "public" server on 127.0.0.2 (the only address the guard's
 * allowlist, `allowlist`, admits), and listeners on the forbidden addresses 127.0.0.1, 127.0.0.3 and
 * [::1], all on one port, counting every connection that reaches them (`arrivals`): HTTP, CONNECT,
 * SOCKS or anything else. A fetcher under test is pointed at the forbidden addresses in every
 * encoding (`forbiddenUrls`), at the public server's redirects to each of them (`redirects`), and a
 * proxy at every form of their hosts (`forbiddenHosts`); then `arrivals()` must be 0.
 */
export interface SsrfTargets {
  /** SSRF_ALLOWLIST of the matrix: the public server only. */
  allowlist: string[];
  port: number;
  /** `http://127.0.0.2:port`: `/ok` answers 200 "ok"; `/to/<URL-encoded target>` answers 307 to it. */
  publicUrl: string;
  /** Every encoding of a forbidden address, as a URL on the listeners' port. */
  forbiddenUrls: string[];
  /** The public server's 307s to each forbidden URL (and a 302 and a 301 to the first ones). */
  redirects: string[];
  /** The hosts of `forbiddenUrls` as a proxy or broker URL would carry them (`host:port`). */
  forbiddenHosts: string[];
  /** Connections that reached a forbidden listener so far, by address. */
  arrivals(): Record<string, number>;
  /** Requests the public server answered, with their paths and headers. */
  publicHits: Array<{ path: string; headers: Record<string, unknown> }>;
  /** Connections the public server took (a proxy's CONNECT included, which it refuses). */
  publicConnections(): number;
  close(): Promise<void>;
}

/** The forms of 127.0.0.1 (and of the other forbidden addresses) a tenant can write in a URL's host. */
const FORBIDDEN_HOSTS = [
  '127.0.0.1',
  '2130706433',
  '0x7f000001',
  '0177.0.0.1',
  '127.1',
  '127.0.1',
  '0x7f.1',
  '017700000001',
  '0x7f.0.0.1',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[::127.0.0.1]',
  '[::ffff:0:127.0.0.1]',
  '[64:ff9b::127.0.0.1]',
  '[64:ff9b:1::7f00:1]',
  '[2002:7f00:1::]',
  '[2001:0:7f00:1::]',
  '[2001:0:808:808::80ff:fffe]',
  '[::1]',
  '[0:0:0:0:0:0:0:1]',
  'localhost',
  '127.0.0.3',
  '169.254.169.254',
];

const FORBIDDEN_LISTENERS = ['127.0.0.1', '127.0.0.3', '::1'];

export async function startSsrfTargets(): Promise<SsrfTargets> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await tryStart();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 10) throw error;
    }
  }
}

async function tryStart(): Promise<SsrfTargets> {
  const sockets = new Set<Socket>();
  const counts: Record<string, number> = {};
  const publicHits: SsrfTargets['publicHits'] = [];
  const publicServer: HttpServer = createHttpServer((request, response) => {
    publicHits.push({ path: request.url ?? '', headers: { ...request.headers } });
    const path = request.url ?? '';
    const to = /^\/to(\d{3})?\/(.+)$/.exec(path);
    if (to) {
      response.writeHead(Number(to[1] ?? 307), { location: decodeURIComponent(to[2]) });
      return response.end();
    }
    response.writeHead(path === '/ok' || path.startsWith('/ok?') ? 200 : 404, { 'content-type': 'text/plain' });
    response.end('ok');
  });
  let connections = 0;
  publicServer.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
  });
  await listen(publicServer, 0, '127.0.0.2');
  const port = (publicServer.address() as { port: number }).port;
  const listeners: Server[] = [];
  try {
    for (const address of FORBIDDEN_LISTENERS) {
      const server = createServer((socket) => {
        counts[address] = (counts[address] ?? 0) + 1;
        sockets.add(socket);
        socket.on('error', () => undefined);
        // Answers like an open proxy or web server would, so a fetcher that got here does not hang.
        socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nno'));
      });
      await listen(server, port, address);
      listeners.push(server);
    }
  } catch (error) {
    await Promise.all([publicServer, ...listeners].map(closeServer));
    throw error;
  }
  const publicUrl = `http://127.0.0.2:${port}`;
  const forbiddenUrls = FORBIDDEN_HOSTS.map((host) => `http://${host}:${port}/secret`);
  const redirects = [
    ...forbiddenUrls.map((url) => `${publicUrl}/to/${encodeURIComponent(url)}`),
    `${publicUrl}/to302/${encodeURIComponent(forbiddenUrls[0])}`,
    `${publicUrl}/to301/${encodeURIComponent(forbiddenUrls[0])}`,
    `${publicUrl}/to308/${encodeURIComponent(`http://[::1]:${port}/secret`)}`,
  ];
  return {
    allowlist: ['127.0.0.2/32'],
    port,
    publicUrl,
    forbiddenUrls,
    redirects,
    forbiddenHosts: FORBIDDEN_HOSTS.map((host) => `${host}:${port}`),
    arrivals: () => ({ ...counts }),
    publicHits,
    publicConnections: () => connections,
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all([publicServer, ...listeners].map(closeServer));
    },
  };
}

function listen(server: Server | HttpServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, ipv6Only: host.includes(':') }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server | HttpServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
