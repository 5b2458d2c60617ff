import { InstanceEntity, InstanceRepository } from '@gw/persistence';
import { openTestDatabase, recordStatements, type TestDatabase } from '@gw/testing';

/**
 * InstanceRepository.findManyWithCreds (issue #38): what a worker reads right after it claimed orphans'
 * leases, each instance's row and its stored credentials, in one statement (it was findById and then the
 * auth state's readCreds: two round trips per adoption). Asked here for one instance at a time.
 */
describe('InstanceRepository.findManyWithCreds', () => {
  let db: TestDatabase;
  let sut: InstanceRepository;
  let statements: string[] = [];

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new InstanceRepository(db.dataSource);
    statements = await recordStatements(db.dataSource);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await db.close();
  });
  beforeEach(() => statements.splice(0));
  const findWithCreds = async (id: string) => (await sut.findManyWithCreds([id])).get(id) ?? null;

  it('should answer the row, typed as the entity and equal to findById, and the stored credentials, in one statement', async () => {
    await sut.create({
      id: 'i-creds',
      token: 'token-i-creds',
      name: 'name',
      owner: '5531999',
      paired: true,
      lastDisconnect: new Date('2026-12-05T10:00:00.123Z'),
    });
    await db.dataSource.query(`INSERT INTO auth_creds (instance_id, value) VALUES ($1, $2)`, ['i-creds', '{"me":{"id":"5531999:1@s.whatsapp.net"}}']);
    statements.splice(0);

    const found = await findWithCreds('i-creds');

    expect(statements).toHaveLength(1);
    expect(found?.entity).toBeInstanceOf(InstanceEntity);
    expect(found?.entity).toEqual(await sut.findById('i-creds'));
    expect(found?.creds).toBe('{"me":{"id":"5531999:1@s.whatsapp.net"}}');
    // Run often, it goes as a prepared statement (PreparingClient): the same answer.
    for (let i = 0; i < 4; i++) expect(await findWithCreds('i-creds')).toEqual(found);
  });

  it('should answer null credentials for an instance that has none stored', async () => {
    await sut.create({ id: 'i-no-creds', token: 'token-i-no-creds', name: 'name' });

    const found = await findWithCreds('i-no-creds');

    expect(found?.entity).toEqual(await sut.findById('i-no-creds'));
    expect(found?.creds).toBeNull();
    expect(found?.deviceLists).toEqual([]);
  });

  it('should answer null for an instance that does not exist', async () => {
    expect(await findWithCreds('i-missing')).toBeNull();
  });

  it('should answer the device lists a holder kept (keepDeviceLists), the last kept replacing the one before, none once emptied or deleted', async () => {
    await sut.create({ id: 'i-lists', token: 'token-i-lists', name: 'name' });
    const lists = [{ user: '5531888', devices: [{ user: '5531888', device: 0, server: 's.whatsapp.net' }], expiresAt: 1_800_000_000_000 }];
    await sut.keepDeviceLists('i-lists', lists);
    statements.splice(0);
    expect((await findWithCreds('i-lists'))?.deviceLists).toEqual(lists);
    expect(statements).toHaveLength(1);

    const newer = [{ ...lists[0], expiresAt: 1_800_000_060_000 }];
    await sut.keepDeviceLists('i-lists', newer);
    expect((await findWithCreds('i-lists'))?.deviceLists).toEqual(newer);
    await sut.keepDeviceLists('i-lists', []);
    expect((await findWithCreds('i-lists'))?.deviceLists).toEqual([]);

    // Written longer ago than a list lives: only expired lists in it, not read.
    await sut.keepDeviceLists('i-lists', lists);
    await db.dataSource.query(`UPDATE instance_device_lists SET written_at = now() - interval '301 seconds' WHERE instance_id = 'i-lists'`);
    expect((await findWithCreds('i-lists'))?.deviceLists).toEqual([]);

    // Kept for an instance that is gone (deleted meanwhile): nothing written, no error; deleted after: gone with it.
    await sut.keepDeviceLists('i-gone', lists);
    await sut.keepDeviceLists('i-lists', lists);
    await db.dataSource.query(`DELETE FROM instances WHERE id = 'i-lists'`);
    expect(await db.dataSource.query(`SELECT instance_id FROM instance_device_lists WHERE instance_id IN ('i-lists', 'i-gone')`)).toEqual([]);
  });
});
