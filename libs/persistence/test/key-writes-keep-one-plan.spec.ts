import { genericPlan, openTestDatabase, planChoices, type TestDatabase } from '@gw/testing';
import { AuthStateRepository, InstanceRepository, LeaseRepository, type Lease } from '@gw/persistence';

/**
 * Baileys writes a Signal session for nearly every message it encrypts or decrypts, so the key write
 * (AuthStateRepository.write: one instance's write alone, or several instances' in one group) is among a
 * worker's most frequent statements. It goes out prepared; Postgres must keep one plan for it. With its
 * arrays (and the creds) as plain parameters, a plan made for each call's values looked cheaper than the
 * generic one once the table held a real worker's keys, and Postgres planned every write again
 * (bench/cluster's steady state, pg_stat_statements: 2,350 plans for 2,350 calls).
 */
describe('Signal key writes keep one plan', () => {
  let db: TestDatabase;
  let leases: LeaseRepository;
  const own: Lease[] = [];
  const ids = ['i-keyplan-1', 'i-keyplan-2', 'i-keyplan-3'];

  beforeAll(async () => {
    db = await openTestDatabase();
    leases = new LeaseRepository(db.dataSource);
    const instances = new InstanceRepository(db.dataSource);
    for (const id of ids) {
      await instances.create({ id, token: `token-${id}`, name: id });
      own.push((await leases.claim(id, 'w-keyplan', 60_000))!);
    }
    // A worker's keys: pre-keys and sessions, 20,000 per instance.
    await db.dataSource.query(
      `INSERT INTO auth_keys (instance_id, type, key_id, value)
       SELECT i, CASE WHEN g % 3 = 0 THEN 'session' ELSE 'pre-key' END, 'k' || g, repeat('x', 200)
       FROM unnest($1::text[]) AS i, generate_series(1, 20000) AS g`,
      [ids],
    );
    await db.dataSource.query(`ANALYZE auth_keys`);
  });
  afterAll(async () => {
    await leases.closeRenewal();
    await db.close();
  });

  /** The statements of one write alone and of a group of two (the first goes alone; the next two wait and go together). */
  async function capture(): Promise<Array<[string, unknown[]]>> {
    const auth = new AuthStateRepository(db.dataSource);
    const spy = jest.spyOn(db.dataSource, 'query');
    try {
      await Promise.all(own.map((lease, n) => auth.write(lease, { keys: [{ type: 'session', id: `peer.${n}`, value: `record ${n}` }] })));
      return spy.mock.calls.map(([sql, parameters]) => [sql, (parameters ?? []) as unknown[]]);
    } finally {
      spy.mockRestore();
    }
  }

  it('should let Postgres keep the generic plan of a write alone and of a group', async () => {
    const statements = await capture();
    expect(statements).toHaveLength(2);
    expect(statements[0][0]).toContain('/* prepared */');
    expect(statements[1][0]).toContain('/* prepared */');
    for (const [sql, parameters] of statements) expect(await planChoices(db.dataSource, sql, parameters, 10)).toEqual({ custom: 5, generic: 5 });
  });

  it('should find each key by its primary key in the generic plans', async () => {
    for (const [sql, parameters] of await capture()) {
      const plan = await genericPlan(db.dataSource, sql, parameters);
      expect(plan).not.toMatch(/Seq Scan on auth_keys/);
      expect(plan).toMatch(/auth_keys_pkey/);
    }
  });
});
