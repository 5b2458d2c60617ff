import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NATS_SERVER_BINARY } from './private-nats';
import { sleep } from './wait';

/** One server of a suite's NATS cluster. */
export interface NatsClusterNode {
  /** Its client URL, with the cluster's credentials when it has some. */
  url: string;
  /** kill -9 of this server. */
  kill(): void;
}

export interface NatsCluster {
  nodes: NatsClusterNode[];
  /** Every node's URL, comma-separated (a client that may use any of them). */
  url: string;
  /** Kills every server still running and removes their configuration. */
  stop(): Promise<void>;
}

/** `count` distinct free loopback ports: all held open together, so that none is handed out twice. */
async function freePorts(count: number): Promise<number[]> {
  const held = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  const ports = held.map((server) => (server.address() as { port: number }).port);
  await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * `size` nats-servers of a suite's own in one cluster on loopback (every node routed to every other), each asking
 * clients for `credentials` when given (as in production), once each listens and the routes had a moment to form.
 * Null where the machine has no nats-server binary.
 */
export async function startNatsCluster(size: number, credentials?: { user: string; password: string }): Promise<NatsCluster | null> {
  if (!existsSync(NATS_SERVER_BINARY)) return null;
  const dir = mkdtempSync(join(tmpdir(), 'nats-cluster-'));
  const ports = await freePorts(2 * size);
  const servers = Array.from({ length: size }, (_, i) => ({ client: ports[2 * i], route: ports[2 * i + 1] }));
  const processes: ChildProcess[] = servers.map((server, i) => {
    const file = join(dir, `n${i}.conf`);
    const routes = servers.filter((_, j) => j !== i).map((other) => `"nats-route://127.0.0.1:${other.route}"`);
    writeFileSync(
      file,
      [
        `server_name: "n${i}"`,
        `listen: "127.0.0.1:${server.client}"`,
        ...(credentials ? [`authorization { user: "${credentials.user}", password: "${credentials.password}" }`] : []),
        `cluster { name: "c", listen: "127.0.0.1:${server.route}", routes: [${routes.join(', ')}] }`,
      ].join('\n'),
    );
    return spawn(NATS_SERVER_BINARY, ['-c', file], { stdio: 'ignore' });
  });
  const stop = async () => {
    for (const child of processes) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  for (const server of servers) {
    let up = false;
    for (let tries = 0; tries < 100 && !(up = await accepts(server.client)); tries++) await sleep(100);
    if (!up) {
      await stop();
      throw new Error(`nats-server on 127.0.0.1:${server.client} did not start`);
    }
  }
  await sleep(1_000);
  const auth = credentials ? `${credentials.user}:${encodeURIComponent(credentials.password)}@` : '';
  const nodes = servers.map((server, i) => ({ url: `nats://${auth}127.0.0.1:${server.client}`, kill: () => processes[i].kill('SIGKILL') }));
  return { nodes, url: nodes.map((node) => node.url).join(','), stop };
}
