import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '@gw/contracts';
import { ConnectionLostError, NatsBus } from '@gw/bus';

const NATS_SERVER = '/usr/sbin/nats-server';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
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

/** Three nats-servers in one cluster, each asking clients for a user and password (as in production). */
describe('NatsBus on a NATS cluster with authorization', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nats-cluster-'));
  const servers: Array<{ client: number; route: number; process?: ChildProcess }> = [];
  const credentialed = (server: { client: number }) => `nats://gw:${encodeURIComponent('p/ss w')}@127.0.0.1:${server.client}`;
  let url = '';
  const buses: NatsBus[] = [];

  beforeAll(async () => {
    if (!existsSync(NATS_SERVER)) return;
    for (let i = 0; i < 3; i++) servers.push({ client: await freePort(), route: await freePort() });
    servers.forEach((server, i) => {
      const others = servers.filter((_, j) => j !== i);
      const file = join(dir, `n${i}.conf`);
      writeFileSync(
        file,
        [
          `server_name: "n${i}"`,
          `listen: "127.0.0.1:${server.client}"`,
          `authorization { user: "gw", password: "p/ss w" }`,
          `cluster { name: "c", listen: "127.0.0.1:${server.route}", routes: [${others.map((o) => `"nats-route://127.0.0.1:${o.route}"`).join(', ')}] }`,
        ].join('\n'),
      );
      server.process = spawn(NATS_SERVER, ['-c', file], { stdio: 'ignore' });
    });
    url = servers.map(credentialed).join(',');
    // Each server listening, then a moment for the routes to form.
    for (const server of servers) {
      for (let tries = 0; tries < 100 && !(await accepts(server.client)); tries++) await sleep(100);
    }
    await sleep(1_000);
  });

  afterAll(async () => {
    for (const bus of buses) await bus.close().catch(() => undefined);
    for (const server of servers) server.process?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const itWithServer = (title: string, fn: () => Promise<void>) =>
    it(title, async () => {
      if (!existsSync(NATS_SERVER)) return console.warn(`skipped (no ${NATS_SERVER}): ${title}`);
      await fn();
    });

  itWithServer('should connect with the credentials written in NATS_URL', async () => {
    const bus = await NatsBus.connect(url, 'nats-cluster-test-a');
    buses.push(bus);
    await expect(bus.ping()).resolves.toBeUndefined();
  });

  itWithServer('should go on through the other server after the one it used is killed', async () => {
    // Each on its own server: the responder on the second, the requester starting on the first.
    // The client picks a server of the list at random: the requester is given only the first (it learns
    // the others from the cluster's gossip), the responder only the second.
    const [first, second] = servers.map(credentialed);
    const responder = await NatsBus.connect(second, 'nats-cluster-test-responder');
    const requester = await NatsBus.connect(first, 'nats-cluster-test-requester');
    buses.push(responder, requester);
    responder.subscribe('cluster.echo', async (data) => ({ echoed: data }));
    await sleep(500);
    await expect(requester.request('cluster.echo', 1, { timeoutMs: 2_000 })).resolves.toEqual({ echoed: 1 });

    servers[0].process?.kill('SIGKILL');
    const deadline = Date.now() + 10_000;
    let answer: unknown;
    while (Date.now() < deadline && answer === undefined) {
      answer = await requester.request('cluster.echo', 2, { timeoutMs: 1_000 }).catch(() => undefined);
      if (answer === undefined) await sleep(200);
    }
    expect(answer).toEqual({ echoed: 2 });
  });

  itWithServer('should fail a request in flight at once when its server is lost, not at its timeout', async () => {
    // The third server: the requester alone on it (it learns the others from the cluster's gossip), the
    // responder on the second, slow to answer.
    const responder = await NatsBus.connect(credentialed(servers[1]), 'nats-cluster-test-slow');
    const requester = await NatsBus.connect(credentialed(servers[2]), 'nats-cluster-test-in-flight');
    buses.push(responder, requester);
    responder.subscribe('cluster.slow', async () => {
      await sleep(3_000);
      return 'late';
    });
    await sleep(500);
    const started = Date.now();
    const answer = requester.request('cluster.slow', null, { timeoutMs: 20_000 }).catch((error: unknown) => error);
    await sleep(500);
    servers[2].process?.kill('SIGKILL');
    const error = await answer;
    expect(error).toBeInstanceOf(ConnectionLostError);
    expect(error).toMatchObject({ code: ErrorCode.Timeout });
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
