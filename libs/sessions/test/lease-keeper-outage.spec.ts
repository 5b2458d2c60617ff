import { InstanceRepository, LeaseRepository, openDatabase, type Lease } from '@gw/persistence';
import { openTestDatabase, startLatencyProxy, type LatencyProxy, type TestDatabase } from '@gw/testing';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { LeaseKeeper, type LeaseListener } from '../src/lease/lease-keeper';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class RecordingListener implements LeaseListener {
  readonly lost: string[] = [];
  readonly adopted: string[] = [];
  leaseLost(instanceId: string): void {
    this.lost.push(instanceId);
  }
  async orphanClaimed(lease: Lease): Promise<void> {
    this.adopted.push(lease.instanceId);
  }
}

/**
 * Issue #39: the keeper's view of a database outage. Its renewals go through a proxy that the test
 * cuts; the shared Postgres stays up (the lease rows are read directly).
 */
describe('LeaseKeeper through a database outage', () => {
  let db: TestDatabase;
  let proxy: LatencyProxy;
  let proxied: DataSource;
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const keepers: LeaseKeeper[] = [];

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  // Each test its own proxy and pool: connections frozen by one test stay frozen, and would hang the next.
  beforeEach(async () => {
    const url = new URL(db.url);
    proxy = await startLatencyProxy({ host: url.hostname, port: Number(url.port || 5432) }, 0);
    proxied = await openDatabase({ url: proxy.rewrite(db.url), schema: db.schema, poolSize: 3 });
  });
  afterEach(async () => {
    // kill -9: nothing is written through the proxy, whose connections may be frozen.
    for (const keeper of keepers.splice(0)) keeper.halt();
    await proxy.close();
    await proxied.destroy().catch(() => undefined);
  });
  afterAll(() => db.close());

  const start = async (workerId: string, ttlMs: number, ids: string[]) => {
    for (const id of ids) await new InstanceRepository(db.dataSource).create({ id, token: `t-${id}`, name: id, paired: true, desiredState: 'connected' });
    const sut = new LeaseKeeper(new LeaseRepository(proxied), { workerId, capacity: 10, ttlMs, reconcileIntervalMs: 600_000 }, logger);
    keepers.push(sut);
    const listener = new RecordingListener();
    await sut.start(listener);
    for (const id of ids) expect((await sut.claim(id)).kind).toBe('claimed');
    await sut.renewNow();
    return { sut, listener };
  };

  const liveRows = async (ids: string[], workerId: string): Promise<number> =>
    Number(
      (
        await db.dataSource.query(`SELECT count(*) AS n FROM session_leases WHERE instance_id = ANY($1) AND worker_id = $2 AND expires_at > now()`, [
          ids,
          workerId,
        ])
      )[0].n,
    );

  it('keeps every lease through an outage shorter than the TTL (connections cut, new ones refused)', async () => {
    const ids = ['ko-cut-1', 'ko-cut-2'];
    const { sut, listener } = await start('w-outage-cut', 6_000, ids);
    proxy.outage('refuse');
    await sleep(3_000);
    proxy.restore();
    await sleep(4_000);
    expect(listener.lost).toEqual([]);
    expect(sut.heldIds().sort()).toEqual(ids);
    expect(await liveRows(ids, 'w-outage-cut')).toBe(2);
  }, 30_000);

  it('renews again after an outage that froze its renewal connection for good (no reset: only its own timeout ends the wait)', async () => {
    const ids = ['ko-frozen-1', 'ko-frozen-2'];
    const { sut } = await start('w-outage-frozen', 3_000, ids);
    // The renewal connection is open and frozen: the server vanished without a word; new connects hang.
    proxy.outage('blackhole', { keep: true });
    await sleep(1_500);
    proxy.restore();
    // Past the TTL: the rows renewed before the outage have lapsed unless a renewal got through since.
    await sleep(3_000);
    // A renewal waiting on the frozen connection gives up (≈2 intervals), the next takes a new one and
    // renews the rows, still this worker's (the sessions stopped at the cut-off are taken back).
    const deadline = Date.now() + 12_000;
    while (Date.now() < deadline && ((await liveRows(ids, 'w-outage-frozen')) < 2 || sut.heldCount < 2)) await sleep(200);
    expect(await liveRows(ids, 'w-outage-frozen')).toBe(2);
    expect(sut.heldIds().sort()).toEqual(ids);
  }, 30_000);
});
