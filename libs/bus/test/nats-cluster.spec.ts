import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsBus } from '@gw/bus';

const NATS_SERVER = '/usr/sbin/nats-server';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Two nats-servers in one cluster, both asking clients for a user and password (as in production). */
describe('NatsBus on a NATS cluster with authorization', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nats-cluster-'));
  const servers: Array<{ client: number; route: number; process?: ChildProcess }> = [];
  let url = '';
  const buses: NatsBus[] = [];

  beforeAll(async () => {
    if (!existsSync(NATS_SERVER)) return;
    for (let i = 0; i < 2; i++) servers.push({ client: await freePort(), route: await freePort() });
    servers.forEach((server, i) => {
      const other = servers[1 - i];
      const file = join(dir, `n${i}.conf`);
      writeFileSync(
        file,
        [
          `server_name: "n${i}"`,
          `listen: "127.0.0.1:${server.client}"`,
          `authorization { user: "gw", password: "p/ss w" }`,
          `cluster { name: "c", listen: "127.0.0.1:${server.route}", routes: ["nats-route://127.0.0.1:${other.route}"] }`,
        ].join('\n'),
      );
      server.process = spawn(NATS_SERVER, ['-c', file], { stdio: 'ignore' });
    });
    url = servers.map((s) => `nats://gw:${encodeURIComponent('p/ss w')}@127.0.0.1:${s.client}`).join(',');
    await sleep(1_500);
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
    const [first, second] = servers.map((s) => `nats://gw:${encodeURIComponent('p/ss w')}@127.0.0.1:${s.client}`);
    const responder = await NatsBus.connect(`${second},${first}`, 'nats-cluster-test-responder');
    const requester = await NatsBus.connect(`${first},${second}`, 'nats-cluster-test-requester');
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
});
