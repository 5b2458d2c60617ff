import { NatsBus } from '@gw/bus';
import { Subjects, type HolderRejoined } from '@gw/contracts';
import { TakeoverRequester } from '@gw/session-client';
import { sleep, startNatsCluster, type NatsCluster } from '@gw/testing';

/**
 * ADR 0059 over real NATS: two nats-servers in one cluster, the holder of an instance on the first, the requester
 * on the second. A send reaches the holder and is lost there with the first server (the holder never answers that
 * try, as a request dropped on its way would never be answered); the first server is killed. The holder's bus comes
 * back on the second server and says so; the requester sends again at once and the holder answers the second try,
 * long before the first try's timeout.
 */
describe('a send whose holder lost its NATS server (ADR 0059)', () => {
  let cluster: NatsCluster | null = null;
  const buses: NatsBus[] = [];

  beforeAll(async () => {
    cluster = await startNatsCluster(2);
  });

  afterAll(async () => {
    for (const bus of buses) await bus.close().catch(() => undefined);
    await cluster?.stop();
  });

  it('should send again as soon as the holder is back on the bus, not at the timeout', async () => {
    if (!cluster) throw new Error('no nats-server binary on this machine');
    const [first, second] = cluster.nodes;
    // Each given one server (a client picks its first server at random from its list); both learn the other from
    // the cluster's gossip, so the holder can come back on the second.
    const holder = await NatsBus.connect(first.url, 'holder-rejoined-test-worker');
    const gateway = await NatsBus.connect(second.url, 'holder-rejoined-test-gateway');
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
        first.kill();
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
