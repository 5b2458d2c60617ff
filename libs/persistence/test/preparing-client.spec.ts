import { createDataSource } from '@gw/persistence';
import { openTestDatabase, withEnv, type TestDatabase } from '@gw/testing';
import type { QueryRunner } from 'typeorm';
import { isStalePlan, PREPARED, PreparedStatementNames, preparedStatements } from '../src/preparing-client';

describe('prepared statements (PreparingClient)', () => {
  let db: TestDatabase;
  let runner: QueryRunner;
  /** What this connection has prepared (an unparameterized query: never prepared itself). */
  const prepared = async () => (await runner.query(`SELECT name, statement FROM pg_prepared_statements`)) as Array<{ name: string; statement: string }>;

  beforeAll(async () => {
    db = await openTestDatabase();
    runner = db.dataSource.createQueryRunner();
    await runner.connect();
  });
  afterAll(async () => {
    await runner.release();
    await db.close();
  });

  it('should prepare a marked parameterized statement once it is hot, and leave the others unnamed', async () => {
    const text = `${PREPARED} SELECT $1::int + 1 AS next /* hot ${Date.now()} */`;
    for (let call = 1; call <= 2; call++) expect(await runner.query(text, [call])).toEqual([{ next: call + 1 }]);
    expect((await prepared()).map((row) => row.statement)).not.toContain(text);
    for (let call = 3; call <= 5; call++) expect(await runner.query(text, [call])).toEqual([{ next: call + 1 }]);
    const mine = (await prepared()).filter((row) => row.statement === text);
    expect(mine).toHaveLength(1);
    expect(mine[0].name).toBe(preparedStatements.nameFor(text));
    await runner.query(`SELECT 41 + 1 AS plain`);
    // Unmarked: its best plan may depend on the parameters (a generic plan could be far worse).
    const unmarked = `SELECT $1::int * 2 AS doubled`;
    for (let call = 0; call < 5; call++) await runner.query(unmarked, [call]);
    const statements = (await prepared()).map((row) => row.statement);
    expect(statements).not.toContain('SELECT 41 + 1 AS plain');
    expect(statements).not.toContain(unmarked);
  });

  it('should survive a column added under a prepared SELECT * (a migration by a newer version), without an error', async () => {
    await runner.query(`CREATE TABLE prepared_probe (id int PRIMARY KEY, a text)`);
    await runner.query(`INSERT INTO prepared_probe VALUES (1, 'x')`);
    const text = `${PREPARED} SELECT * FROM prepared_probe WHERE id = $1`;
    for (let call = 0; call < 4; call++) expect(await runner.query(text, [1])).toEqual([{ id: 1, a: 'x' }]);
    expect((await prepared()).map((row) => row.statement)).toContain(text);
    await db.dataSource.query(`ALTER TABLE prepared_probe ADD COLUMN b int DEFAULT 7`);
    expect(await runner.query(text, [1])).toEqual([{ id: 1, a: 'x', b: 7 }]);
    // And from then on under its new name on every connection.
    expect(await db.dataSource.query(text, [1])).toEqual([{ id: 1, a: 'x', b: 7 }]);
  });

  it('should fail a transaction whose prepared statement went stale with that error, and prepare it afresh after', async () => {
    await runner.query(`CREATE TABLE prepared_probe_tx (id int PRIMARY KEY, a text)`);
    await runner.query(`INSERT INTO prepared_probe_tx VALUES (1, 'x')`);
    const text = `${PREPARED} SELECT * FROM prepared_probe_tx WHERE id = $1`;
    for (let call = 0; call < 4; call++) await runner.query(text, [1]);
    await db.dataSource.query(`ALTER TABLE prepared_probe_tx ADD COLUMN b int DEFAULT 7`);
    await runner.startTransaction();
    // Not "current transaction is aborted" (the retry's): the caller can tell it may run the transaction again.
    const failed = await runner.query(text, [1]).then(
      () => null,
      (error: unknown) => error,
    );
    await runner.rollbackTransaction();
    expect(isStalePlan(failed)).toBe(true);
    await runner.startTransaction();
    expect(await runner.query(text, [1])).toEqual([{ id: 1, a: 'x', b: 7 }]);
    await runner.commitTransaction();
  });

  it('should be on by default and off with DATABASE_PREPARED_STATEMENTS=false; anything else is refused', () => {
    const clientOf = (value: string | undefined) =>
      withEnv(
        'DATABASE_PREPARED_STATEMENTS',
        value,
        () => (createDataSource({ url: db.url }).options as { extra: { Client?: { name: string } } }).extra.Client?.name,
      );
    expect(clientOf(undefined)).toBe('PreparingClient');
    expect(clientOf('true')).toBe('PreparingClient');
    expect(clientOf('false')).toBeUndefined();
    expect(() => clientOf('maybe')).toThrow('DATABASE_PREPARED_STATEMENTS must be true or false, not "maybe"');
  });
});

describe(PreparedStatementNames.name, () => {
  it('should name a text from its third sighting on, the same name each time', () => {
    const sut = new PreparedStatementNames(3, 10);
    expect(sut.nameFor('a')).toBeNull();
    expect(sut.nameFor('a')).toBeNull();
    const name = sut.nameFor('a');
    expect(name).toMatch(/^gw_[0-9a-f]{24}_0$/);
    expect(sut.nameFor('a')).toBe(name);
  });

  it('should stop naming new texts at its cap (the named ones keep their names)', () => {
    const sut = new PreparedStatementNames(1, 2);
    const a = sut.nameFor('a');
    expect(sut.nameFor('b')).not.toBeNull();
    expect(sut.nameFor('c')).toBeNull();
    expect(sut.nameFor('a')).toBe(a);
    expect(sut.size).toBe(2);
  });

  it('should give a stale text a new name (next generation)', () => {
    const sut = new PreparedStatementNames(1, 10);
    const first = sut.nameFor('a') as string;
    const second = sut.renew('a');
    expect(second).toBe(first.replace(/_0$/, '_1'));
    expect(sut.nameFor('a')).toBe(second);
    expect(sut.renew('a')).toBe(first.replace(/_0$/, '_2'));
  });

  it('should forget the counts of cold texts when too many are counted (memory stays bounded)', () => {
    const sut = new PreparedStatementNames(2, 10, 3);
    for (const text of ['a', 'b', 'c']) expect(sut.nameFor(text)).toBeNull();
    expect(sut.nameFor('d')).toBeNull(); // the counts were cleared to make room
    expect(sut.nameFor('a')).toBeNull(); // its earlier sighting was forgotten
    expect(sut.nameFor('a')).not.toBeNull();
  });
});
