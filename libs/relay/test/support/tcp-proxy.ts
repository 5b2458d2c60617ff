import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy in front of a shared broker, so a test can take "the broker" away and bring it
 * back without stopping the server other tests use: `cut()` drops every connection and refuses new
 * ones; `restore()` listens again on the same port.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;
  /** Client connections accepted since the proxy was made (each a dial of the broker). */
  accepted = 0;

  constructor(
    private readonly upstreamHost: string,
    private readonly upstreamPort: number,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((client) => {
      this.accepted++;
      const upstream = connect(this.upstreamPort, this.upstreamHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      this.server?.once('error', reject);
      this.server?.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Client and upstream sockets open through the proxy. */
  get openSockets(): number {
    return this.sockets.size;
  }

  get url(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The broker "goes down": connections reset, new ones refused. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The broker is back, on the same port. */
  async restore(): Promise<void> {
    await this.start();
  }

  async stop(): Promise<void> {
    await this.cut();
  }
}

export const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 15_000, what = 'condition') => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met in time`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

/** First occurrences only, in arrival order: what a consumer deduplicating by message id keeps. */
export function firstOccurrences<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const id = key(item);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
