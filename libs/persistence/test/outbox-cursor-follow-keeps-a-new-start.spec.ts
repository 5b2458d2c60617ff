import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, OutboxCursorRepository } from '@gw/persistence';

/**
 * A feature turned on starts its cursor in the same transaction (start). A follower's refresh that
 * read the followed set just before that transaction committed must not drop the cursor: the events
 * between the start and the next refresh would be lost (issue 36: the chatbot's first minutes).
 */
describe('OutboxCursorRepository.follow and start', () => {
  let db: TestDatabase;
  let cursors: OutboxCursorRepository;
  const consumer = `follow-${Date.now()}`;
  const ids = [`fk-a-${Date.now()}`, `fk-b-${Date.now()}`];

  beforeAll(async () => {
    db = await openTestDatabase();
    cursors = new OutboxCursorRepository(db.dataSource);
    const instances = new InstanceRepository(db.dataSource);
    for (const id of ids) await instances.create({ id, token: `t-${id}`, name: id });
  });
  afterAll(async () => {
    await db.dataSource.query(`DELETE FROM instances WHERE id = ANY($1)`, [ids]);
    await db.close();
  });

  const followed = async () =>
    (await db.dataSource.query(`SELECT instance_id FROM outbox_cursors WHERE consumer = $1 ORDER BY instance_id`, [consumer])).map(
      (row: { instance_id: string }) => row.instance_id,
    );

  it('keeps a cursor started while the followed set was being read, and drops one no longer followed', async () => {
    const [a, b] = ids;
    expect(await cursors.follow(consumer, async () => [a])).toEqual([a]);
    expect(await followed()).toEqual([a]);
    // The set is read (b not in it yet), then b is turned on with its cursor before the set is applied.
    const kept = await cursors.follow(consumer, async () => {
      await db.dataSource.transaction((manager) => new OutboxCursorRepository(db.dataSource).within(manager).start(consumer, b, true));
      return [a];
    });
    expect(kept).toEqual([a]);
    expect(await followed()).toEqual([a, b]);
    // The next refresh that does not name b drops it; one that names neither drops both.
    await cursors.follow(consumer, async () => [a]);
    expect(await followed()).toEqual([a]);
    await cursors.follow(consumer, async () => []);
    expect(await followed()).toEqual([]);
  });

  it('start restarts a cursor left behind when asked to, and keeps it otherwise', async () => {
    const [a] = ids;
    await cursors.follow(consumer, [a]);
    await db.dataSource.query(`UPDATE outbox_cursors SET tx = 1, id = 1 WHERE consumer = $1 AND instance_id = $2`, [consumer, a]);
    const position = async () =>
      (await db.dataSource.query(`SELECT tx::text FROM outbox_cursors WHERE consumer = $1 AND instance_id = $2`, [consumer, a]))[0].tx;
    await db.dataSource.transaction((manager) => new OutboxCursorRepository(db.dataSource).within(manager).start(consumer, a, false));
    expect(await position()).toBe('1');
    await db.dataSource.transaction((manager) => new OutboxCursorRepository(db.dataSource).within(manager).start(consumer, a, true));
    expect(Number(await position())).toBeGreaterThan(1);
  });
});
