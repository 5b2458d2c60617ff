import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { AuthStateRepository, BlocklistRepository, InstanceRepository, LeaseRepository } from '@gw/persistence';

/**
 * A login reads a few of its keys and its blocklist (issue #38): the reads of many instances asked for
 * while one such statement is in flight go in one statement, each instance answered with its own rows.
 */
describe('reads at a login go together', () => {
  let db: TestDatabase;
  let auth: AuthStateRepository;
  let blocklist: BlocklistRepository;
  let leases: LeaseRepository;
  const ids = ['i-reads-a', 'i-reads-b', 'i-reads-c'];

  beforeAll(async () => {
    db = await openTestDatabase();
    auth = new AuthStateRepository(db.dataSource);
    blocklist = new BlocklistRepository(db.dataSource);
    leases = new LeaseRepository(db.dataSource);
    const instances = new InstanceRepository(db.dataSource);
    for (const id of ids) {
      await instances.create({ id, token: `token-${id}`, name: id });
      const lease = (await leases.claim(id, 'w-reads', 60_000))!;
      await auth.write(lease, {
        keys: [
          { type: 'session', id: 'shared.0', value: `session of ${id}` },
          { type: 'lid-mapping', id: `${id}-own`, value: `mapping of ${id}` },
        ],
      });
    }
    await blocklist.apply('i-reads-a', [{ jid: '5511000000001@s.whatsapp.net', lid: '', action: 'block' }]);
    await blocklist.apply('i-reads-a', [{ jid: '5511000000002@s.whatsapp.net', lid: '9@lid', action: 'block' }]);
    await blocklist.apply('i-reads-c', [{ jid: '5511000000003@s.whatsapp.net', lid: '', action: 'block' }]);
  });
  afterAll(async () => {
    await leases.closeRenewal();
    await db.close();
  });

  /** The statements `work` sends through the pool, by their text. */
  async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
    const query = jest.spyOn(db.dataSource, 'query');
    try {
      await work();
      return query.mock.calls.map(([sql]) => String(sql));
    } finally {
      query.mockRestore();
    }
  }

  it('should answer each instance its own keys, leave out absent ones, and read many instances in two statements at most', async () => {
    let answers: Array<Map<string, string>> = [];
    const statements = await statementsOf(async () => {
      answers = await Promise.all([
        ...ids.map((id) => auth.readKeys(id, 'session', ['shared.0', 'absent.0'])),
        ...ids.map((id) => auth.readKeys(id, 'lid-mapping', [`${id}-own`, 'i-reads-a-own'])),
        auth.readKeys('i-reads-a', 'tctoken', ['nobody']),
      ]);
    });
    expect(answers.slice(0, 3).map((answer) => Object.fromEntries(answer))).toEqual(ids.map((id) => ({ 'shared.0': `session of ${id}` })));
    expect(Object.fromEntries(answers[3])).toEqual({ 'i-reads-a-own': 'mapping of i-reads-a' });
    // Another instance's key of the same id is not this one's.
    expect(Object.fromEntries(answers[4])).toEqual({ 'i-reads-b-own': 'mapping of i-reads-b' });
    expect(Object.fromEntries(answers[5])).toEqual({ 'i-reads-c-own': 'mapping of i-reads-c' });
    expect(answers[6].size).toBe(0);
    // Seven reads: the first two alone (two statements in flight at most), the rest in one statement behind them.
    expect(statements.filter((sql) => /FROM (auth_keys|unnest)/.test(sql)).length).toBeLessThanOrEqual(3);
  });

  it('should answer each instance its own blocklist in order, an empty one for an instance with none, in two statements at most', async () => {
    let lists: unknown[] = [];
    const statements = await statementsOf(async () => {
      lists = await Promise.all([...ids, 'i-reads-a'].map((id) => blocklist.list(id)));
    });
    expect(lists).toEqual([
      [
        { jid: '5511000000001@s.whatsapp.net', lid: '' },
        { jid: '5511000000002@s.whatsapp.net', lid: '9@lid' },
      ],
      [],
      [{ jid: '5511000000003@s.whatsapp.net', lid: '' }],
      [
        { jid: '5511000000001@s.whatsapp.net', lid: '' },
        { jid: '5511000000002@s.whatsapp.net', lid: '9@lid' },
      ],
    ]);
    expect(statements.filter((sql) => /FROM blocklist/.test(sql)).length).toBeLessThanOrEqual(3);
    // Each answer is the caller's own: changing one changes no other.
    (lists[0] as Array<{ jid: string }>)[0].jid = 'changed';
    expect((lists[3] as Array<{ jid: string }>)[0].jid).toBe('5511000000001@s.whatsapp.net');
  });

  it('should read inside a transaction on its connection, seeing what the transaction wrote', async () => {
    const seen = await db.dataSource
      .transaction(async (tx) => {
        await blocklist.within(tx).apply('i-reads-b', [{ jid: '5511000000009@s.whatsapp.net', lid: '', action: 'block' }]);
        const inside = await blocklist.within(tx).list('i-reads-b');
        throw Object.assign(new Error('roll back'), { inside });
      })
      .catch((error: { inside?: unknown }) => error.inside);
    expect(seen).toEqual([{ jid: '5511000000009@s.whatsapp.net', lid: '' }]);
    expect(await blocklist.list('i-reads-b')).toEqual([]);
  });
});
