import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, LeaseRepository, MetricsRepository } from '@gw/persistence';

/** wa_gateway_worker_instances, the figure the session workers' autoscaler reads: live leases of one worker. */
describe('MetricsRepository.instancesHeldBy', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.close());

  it("should count a worker's live leases only: not another worker's, not a lapsed or released one", async () => {
    const instances = new InstanceRepository(db.dataSource);
    const leases = new LeaseRepository(db.dataSource);
    const sut = new MetricsRepository(db.dataSource);
    for (const id of ['m-1', 'm-2', 'm-3', 'm-4', 'm-5']) await instances.create({ id, token: `token-${id}`, name: id });
    await leases.claim('m-1', 'w-a', 60_000);
    await leases.claim('m-2', 'w-a', 60_000);
    const released = (await leases.claim('m-3', 'w-a', 60_000))!;
    await leases.claim('m-4', 'w-a', 1);
    await leases.claim('m-5', 'w-b', 60_000);
    await leases.release(released);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await sut.instancesHeldBy('w-a')).toBe(2);
    expect(await sut.instancesHeldBy('w-b')).toBe(1);
    expect(await sut.instancesHeldBy('w-none')).toBe(0);
  });
});
