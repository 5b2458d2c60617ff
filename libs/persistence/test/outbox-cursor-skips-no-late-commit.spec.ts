import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { OutboxRepository, type OutboxPosition } from '@gw/persistence';
import type { QueryRunner } from 'typeorm';

/**
 * A cursor reader (SSE) must never pass over an event whose transaction commits after a neighbour
 * with a larger id was read. These tests hold transactions open by hand to commit rows out of id order.
 */
describe('OutboxRepository cursor reads', () => {
  let db: TestDatabase;
  let sut: OutboxRepository;
  const open: QueryRunner[] = [];

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new OutboxRepository(db.dataSource);
  });
  afterEach(async () => {
    for (const runner of open.splice(0)) {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  });
  afterAll(() => db.close());

  const begin = async () => {
    const runner = db.dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    open.push(runner);
    return runner;
  };
  const insert = async (runner: QueryRunner, instanceId: string, name: string) =>
    (await new OutboxRepository(db.dataSource).within(runner.manager).insert(instanceId, [{ eventType: 'presence', payload: { name } }]))!;

  /** Reads from `position` until `expected` names arrived (other suites' transactions can delay settling). */
  const readUntil = async (instanceId: string, position: OutboxPosition, expected: number) => {
    const names: string[] = [];
    let cursor = position;
    const deadline = Date.now() + 20_000;
    while (names.length < expected) {
      if (Date.now() > deadline) throw new Error(`only ${JSON.stringify(names)} arrived`);
      const { rows } = await sut.readSettled(instanceId, cursor, 100);
      for (const row of rows) {
        names.push(row.payload.name as string);
        cursor = row.position;
      }
      if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { names, cursor };
  };

  it('should deliver a lower id that commits after a higher id was read (the lower id wrote first)', async () => {
    const { position: start } = await sut.currentPosition('late-1');
    const early = await begin();
    const earlyId = await insert(early, 'late-1', 'early');
    const later = await begin();
    const laterId = await insert(later, 'late-1', 'later');
    await later.commitTransaction();
    expect(BigInt(earlyId)).toBeLessThan(BigInt(laterId));

    // 'later' is committed, but 'early' (a smaller id, an older transaction) is still open: nothing may be read yet.
    expect(await sut.readSettled('late-1', start, 100)).toEqual({ rows: [], waiting: true });

    await early.commitTransaction();
    const { names } = await readUntil('late-1', start, 2);
    expect(names).toEqual(['early', 'later']);
  });

  it('should deliver a lower id that commits late even when its transaction began writing after the other', async () => {
    const { position: start } = await sut.currentPosition('late-2');
    const a = await begin();
    const b = await begin();
    // b gets its transaction id first, then a takes the smaller outbox id; b commits, is read, then a commits.
    await b.query('SELECT pg_current_xact_id()');
    const aId = await insert(a, 'late-2', 'a');
    const bId = await insert(b, 'late-2', 'b');
    expect(BigInt(aId)).toBeLessThan(BigInt(bId));
    await b.commitTransaction();

    const first = await readUntil('late-2', start, 1);
    expect(first.names).toEqual(['b']);

    await a.commitTransaction();
    const second = await readUntil('late-2', first.cursor, 1);
    expect(second.names).toEqual(['a']);
  });

  it('should skip what was visible at the start position and resume a known id by its position', async () => {
    const before = await begin();
    await insert(before, 'late-3', 'before');
    await before.commitTransaction();
    const { position, skip } = await sut.currentPosition('late-3');
    const after = await begin();
    const afterId = await insert(after, 'late-3', 'after');
    await after.commitTransaction();

    const seen: string[] = [];
    let cursor = position;
    const deadline = Date.now() + 20_000;
    while (!seen.includes('after')) {
      if (Date.now() > deadline) throw new Error('the event after the start did not arrive');
      const { rows } = await sut.readSettled('late-3', cursor, 100);
      for (const row of rows) {
        cursor = row.position;
        if (!skip.delete(row.id)) seen.push(row.payload.name as string);
      }
      if (rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(seen).toEqual(['after']);

    expect((await sut.readSettled('late-3', await sut.positionOf('late-3', afterId), 100)).rows).toEqual([]);
    // An id the outbox does not hold resumes by id alone.
    const unknown = await sut.positionOf('late-3', String(BigInt(afterId) - 1n));
    expect((await sut.readSettled('late-3', unknown, 100)).rows.map((row) => row.payload.name)).toEqual(['after']);
  });
});
