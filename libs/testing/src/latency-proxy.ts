import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A chunk the proxy passed on: `up` from the client towards the server, `down` back. */
export interface ProxiedChunk {
  direction: 'up' | 'down';
}

export interface LatencyProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  /** Every chunk passed so far, in arrival order (only with `record`). */
  chunks: ProxiedChunk[];
  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string;
  /** Cuts every connection through the proxy at once (a network failure); new ones are still accepted. */
  cut(): void;
  /**
   * An outage of the server (a failover, a partition): cuts every connection at once and, until
   * `restore()`, every new one is either closed as soon as it is accepted (`refuse`) or accepted and
   * never answered (`blackhole`: a connect that hangs, as to an address nobody serves any more).
   * `keep`: the open connections are not cut but frozen for good, nothing passing either way, as when
   * the server's machine vanished without a reset (only the client's own timeout ends them).
   */
  outage(mode: 'refuse' | 'blackhole', options?: { keep?: boolean }): void;
  /** Ends the outage: black-holed connections are dropped, new ones reach the server again. */
  restore(): void;
  /** Whether an outage is on. */
  readonly down: boolean;
  close(): Promise<void>;
}

/** How long the proxy holds a chunk going each way, in whole milliseconds (a number: the same both ways). */
export type ProxyDelay = number | { upMs: number; downMs: number };

/**
 * A loopback TCP proxy that holds every chunk before passing it on: a server that much further away
 * (Postgres on another machine) for tests and benchmarks on one machine. The round trip grows by
 * `upMs + downMs`. Node's timers count whole milliseconds (a delay under 1 ms is 1 ms), so a round
 * trip of 1 ms is `{ upMs: 1, downMs: 0 }`, not 0.5 each way. Chunks keep their order in each
 * direction (timers of one duration fire in the order they were set); a side's end or error reaches the
 * other side after the chunks before it.
 */
export async function startLatencyProxy(target: { host: string; port: number }, delay: ProxyDelay, options: { record?: boolean } = {}): Promise<LatencyProxy> {
  const { upMs, downMs } = typeof delay === 'number' ? { upMs: delay, downMs: delay } : delay;
  for (const ms of [upMs, downMs]) if (!Number.isInteger(ms) || ms < 0) throw new Error(`a proxy delay is a whole number of milliseconds ≥ 0, not ${ms}`);
  const chunks: ProxiedChunk[] = [];
  const sockets = new Set<Socket>();
  /** Connections frozen by an outage that kept them: nothing passes on them any more. */
  const frozen = new WeakSet<Socket>();
  const pipe = (from: Socket, to: Socket, direction: ProxiedChunk['direction']) => {
    const ms = direction === 'up' ? upMs : downMs;
    const later = (work: () => void) => (ms > 0 ? setTimeout(work, ms) : work());
    from.on('data', (chunk: Buffer) => {
      if (frozen.has(from)) return;
      if (options.record) chunks.push({ direction });
      later(() => {
        if (!to.destroyed) to.write(chunk);
      });
    });
    from.on('end', () => later(() => to.end()));
    from.on('error', () => later(() => to.destroy()));
    from.on('close', () => later(() => to.destroy()));
  };
  let outage: 'refuse' | 'blackhole' | null = null;
  /** Connections accepted during a black-hole outage: held unanswered, dropped at restore(). */
  const held = new Set<Socket>();
  const server = createServer((client) => {
    if (outage === 'refuse') {
      client.destroy();
      return;
    }
    if (outage === 'blackhole') {
      held.add(client);
      client.on('error', () => undefined);
      client.once('close', () => held.delete(client));
      return;
    }
    client.setNoDelay(true);
    const upstream = connect({ host: target.host, port: target.port });
    upstream.setNoDelay(true);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    }
    pipe(client, upstream, 'up');
    pipe(upstream, client, 'down');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    chunks,
    rewrite(url: string): string {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    cut(): void {
      for (const socket of sockets) socket.destroy();
    },
    outage(mode: 'refuse' | 'blackhole', outageOptions: { keep?: boolean } = {}): void {
      outage = mode;
      for (const socket of sockets) {
        if (outageOptions.keep) frozen.add(socket);
        else socket.destroy();
      }
    },
    restore(): void {
      outage = null;
      for (const socket of held) socket.destroy();
    },
    get down(): boolean {
      return outage !== null;
    },
    close: () =>
      new Promise<void>((resolve) => {
        outage = null;
        for (const socket of [...sockets, ...held]) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
