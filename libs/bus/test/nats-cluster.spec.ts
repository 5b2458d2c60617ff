import { existsSync } from 'node:fs';
import { ErrorCode } from '@gw/contracts';
import { ConnectionLostError, NatsBus } from '@gw/bus';
import { NATS_SERVER_BINARY, sleep, startNatsCluster, type NatsCluster } from '@gw/testing';

/** Three nats-servers in one cluster, each asking clients for a user and password (as in production). */
describe('NatsBus on a NATS cluster with authorization', () => {
  let cluster: NatsCluster | null = null;
  const servers: Array<{ url: string; kill(): void }> = [];
  let url = '';
  const buses: NatsBus[] = [];

  beforeAll(async () => {
    cluster = await startNatsCluster(3, { user: 'gw', password: 'p/ss w' });
    if (!cluster) return;
    servers.push(...cluster.nodes);
    url = cluster.url;
  });

  afterAll(async () => {
    for (const bus of buses) await bus.close().catch(() => undefined);
    await cluster?.stop();
  });

  const itWithServer = (title: string, fn: () => Promise<void>) =>
    it(title, async () => {
      if (!existsSync(NATS_SERVER_BINARY)) return console.warn(`skipped (no ${NATS_SERVER_BINARY}): ${title}`);
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
    const [first, second] = servers.map((server) => server.url);
    const responder = await NatsBus.connect(second, 'nats-cluster-test-responder');
    const requester = await NatsBus.connect(first, 'nats-cluster-test-requester');
    buses.push(responder, requester);
    responder.subscribe('cluster.echo', async (data) => ({ echoed: data }));
    await sleep(500);
    await expect(requester.request('cluster.echo', 1, { timeoutMs: 2_000 })).resolves.toEqual({ echoed: 1 });

    servers[0].kill();
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
    const responder = await NatsBus.connect(servers[1].url, 'nats-cluster-test-slow');
    const requester = await NatsBus.connect(servers[2].url, 'nats-cluster-test-in-flight');
    buses.push(responder, requester);
    responder.subscribe('cluster.slow', async () => {
      await sleep(3_000);
      return 'late';
    });
    await sleep(500);
    const started = Date.now();
    const answer = requester.request('cluster.slow', null, { timeoutMs: 20_000 }).catch((error: unknown) => error);
    await sleep(500);
    servers[2].kill();
    const error = await answer;
    expect(error).toBeInstanceOf(ConnectionLostError);
    expect(error).toMatchObject({ code: ErrorCode.Timeout });
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
