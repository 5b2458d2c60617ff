import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsBus } from '@gw/bus';
import { Subjects, type HolderRejoined } from '@gw/contracts';
import { TakeoverRequester } from '@gw/session-client';

const NATS_SERVER = '/usr/sbin/nats-server';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `count` distinct free ports: all held open together, so that none is handed out twice. */
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
 * ADR 0059 over real NATS: two nats-servers in one cluster, the holder of an instance on the first, the requester
 * on the second. A send reaches the holder and is lost there with the first server (the holder never answers that
 * try, as a request dropped on its way would never be answered); the first server is killed. The holder's bus comes
 * back on the second server and says so; the requester sends again at once and the holder answers the second try,
 * long before the first try's timeout.
 */
describe('a send whose holder lost its NATS server (ADR 0059)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nats-rejoin-'));
  const servers: Array<{ client: number; route: number; process?: ChildProcess }> = [];
  const buses: NatsBus[] = [];
  const urlOf = (server: { client: number }) => `nats://127.0.0.1:${server.client}`;

  beforeAll(async () => {
    const ports = await freePorts(4);
    for (let i = 0; i < 2; i++) servers.push({ client: ports[2 * i], route: ports[2 * i + 1] });
    servers.forEach((server, i) => {
      const other = servers[1 - i];
      const file = join(dir, `n${i}.conf`);
      writeFileSync(
        file,
        [
          `server_name: "n${i}"`,
          `listen: "127.0.0.1:${server.client}"`,
          `cluster { name: "rejoin", listen: "127.0.0.1:${server.route}", routes: ["nats-route://127.0.0.1:${other.route}"] }`,
        ].join('\n'),
      );
      server.process = spawn(NATS_SERVER, ['-c', file], { stdio: 'ignore' });
    });
    for (const server of servers) {
      let up = false;
      for (let tries = 0; tries < 100 && !(up = await accepts(server.client)); tries++) await sleep(100);
      if (!up) throw new Error(`nats-server on 127.0.0.1:${server.client} did not start`);
    }
    await sleep(1_000);
  });

  afterAll(async () => {
    for (const bus of buses) await bus.close().catch(() => undefined);
    for (const server of servers) server.process?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('should send again as soon as the holder is back on the bus, not at the timeout', async () => {
    expect(existsSync(NATS_SERVER)).toBe(true);
    // Each given one server (a client picks its first server at random from its list); both learn the other from
    // the cluster's gossip, so the holder can come back on the second.
    const holder = await NatsBus.connect(urlOf(servers[0]), 'holder-rejoined-test-worker');
    const gateway = await NatsBus.connect(urlOf(servers[1]), 'holder-rejoined-test-gateway');
    buses.push(holder, gateway);
    // What SessionWorker.start() does with its bus.
    let rejoins = 0;
    holder.onRejoin(() => {
      rejoins += 1;
      holder.publish(Subjects.holderRejoined, { workerId: 'w1', instanceIds: ['i1'] } satisfies HolderRejoined);
    });
    let tries = 0;
    holder.subscribe('instance.i1.send', async () => {
      tries += 1;
      if (tries === 1) {
        // Lost with the server: never answered. The server goes now.
        servers[0].process?.kill('SIGKILL');
        return new Promise(() => undefined);
      }
      return { messageId: 'm1', status: 'Sent' };
    });
    // The holder is alive all along: it answers the requester's holder checks.
    holder.subscribe('instance.i1.status', async () => ({ status: 'connected', loggedIn: true }));
    await sleep(500);

    const requester = new TakeoverRequester(gateway, { failoverWaitMs: 20_000, heldRecently: async () => true });
    const started = Date.now();
    const answer = await requester.requestAcrossTakeover('i1', 'send', {} as never, 20_000);
    const tookMs = Date.now() - started;

    expect(answer).toEqual({ messageId: 'm1', status: 'Sent' });
    expect(rejoins).toBe(1);
    expect(tries).toBe(2);
    // The holder's reconnect (its client waits 500 ms before each try) and one retry, not the 20 s timeout.
    expect(tookMs).toBeLessThan(5_000);
  }, 30_000);
});
