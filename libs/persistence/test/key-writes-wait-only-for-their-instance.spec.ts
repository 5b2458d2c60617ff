import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { AuthStateRepository, InstanceRepository, LeaseRepository, type Lease } from '@gw/persistence';

/**
 * The Signal key writes of every instance of a worker go in grouped statements (ADR 0012). One of them
 * may wait for a row: an instance being deleted (its cascade holds its lease row) or a lease being taken
 * over. The other instances' writes (and so their sends and decrypts) must not wait with it.
 */
describe('Signal key writes of many instances', () => {
  let db: TestDatabase;
  let auth: AuthStateRepository;
  let leases: LeaseRepository;
  const own: Lease[] = [];

  beforeAll(async () => {
    db = await openTestDatabase();
    auth = new AuthStateRepository(db.dataSource);
    leases = new LeaseRepository(db.dataSource);
    const instances = new InstanceRepository(db.dataSource);
    for (const id of ['i-keys-locked', 'i-keys-free']) {
      await instances.create({ id, token: `token-${id}`, name: id });
      own.push((await leases.claim(id, 'w-keys', 60_000))!);
    }
  });
  afterAll(async () => {
    await leases.closeRenewal();
    await db.close();
  });

  const stored = async (id: string) =>
    (await db.dataSource.query(`SELECT key_id, value FROM auth_keys WHERE instance_id = $1 ORDER BY key_id`, [id])) as Array<{ key_id: string; value: string }>;

  it("should not hold another instance's key write behind one waiting for its lease row, and keep each instance's writes in order", async () => {
    const [locked, free] = own;
    const holder = db.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      await holder.query(`SELECT 1 FROM session_leases WHERE instance_id = 'i-keys-locked' FOR UPDATE`);
      let lockedDone = 0;
      const waiting = [1, 2].map((n) =>
        auth.write(locked, { keys: [{ type: 'session', id: 'peer.0', value: `record ${n}` }] }).then(() => {
          lockedDone++;
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      await auth.write(free, { keys: [{ type: 'session', id: 'peer.0', value: 'free record' }] });
      expect(await stored('i-keys-free')).toEqual([{ key_id: 'peer.0', value: 'free record' }]);
      expect(lockedDone).toBe(0);
      await holder.commitTransaction();
      await Promise.all(waiting);
      // The second write of the instance went after the first: the last value is the second's.
      expect(await stored('i-keys-locked')).toEqual([{ key_id: 'peer.0', value: 'record 2' }]);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
  });
});
