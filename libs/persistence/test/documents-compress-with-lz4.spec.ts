import { openTestDatabase, type TestDatabase } from '@gw/testing';
import type { QueryRunner } from 'typeorm';
import { InstanceRepository, OutboxRepository } from '@gw/persistence';
import { DocumentsLz41764550000000, LZ4_COLUMNS } from '../src/migrations/1764550000000-documents-lz4';

/**
 * ADR 0071: the documents written on the hot paths (a `messages` event is ~2.5 KB of JSON, over the
 * size at which Postgres compresses a value) are compressed with lz4, not pglz, and read back unchanged.
 */
describe('documents compressed with lz4', () => {
  let db: TestDatabase;
  const instanceId = 'rlz4';

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-lz4-1', name: 'lz4' });
  });
  afterAll(() => db.close());

  const lz4Built = async () =>
    (
      (await db.dataSource.query(`SELECT 'lz4' = ANY (enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'`)) as Array<{ lz4: boolean }>
    )[0].lz4;

  const methods = async () =>
    (await db.dataSource.query(
      `SELECT c.relname AS "table", a.attname AS "column", a.attcompression AS method
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND a.attnum > 0 AND NOT a.attisdropped AND (c.relname, a.attname) IN (${LZ4_COLUMNS.map(([t, c]) => `('${t}', '${c}')`).join(', ')})
        ORDER BY 1, 2`,
      [db.schema],
    )) as Array<{ table: string; column: string; method: string }>;

  it('should set lz4 on every listed column of a server built with it', async () => {
    // The development machine's and CI's PostgreSQL (Debian's 15) and the compose file's image have lz4.
    expect(await lz4Built()).toBe(true);
    const found = await methods();
    expect(found).toHaveLength(LZ4_COLUMNS.length);
    expect(found.every((row) => row.method === 'l')).toBe(true);
  });

  it("should store a messages event's payload lz4-compressed and read it back as written", async () => {
    const payload = {
      EventType: 'messages',
      message: { text: 'a received text', chatid: '5511999990000@s.whatsapp.net', fromMe: false },
      chat: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`field${i}`, `value of field ${i} of the chat`])),
    };
    expect(JSON.stringify(payload).length).toBeGreaterThan(2_500);
    const lastId = await new OutboxRepository(db.dataSource).insert(instanceId, [{ eventType: 'messages', payload }]);
    const [row] = (await db.dataSource.query(`SELECT pg_column_compression(payload) AS method, payload FROM outbox_events WHERE id = $1`, [lastId])) as Array<{
      method: string | null;
      payload: unknown;
    }>;
    expect(row.method).toBe('lz4');
    expect(row.payload).toEqual(payload);
  });

  it('should wait out a transaction that holds a table, a statement at a time, without holding the other tables meanwhile', async () => {
    const migration = new DocumentsLz41764550000000();
    const runner = db.dataSource.createQueryRunner();
    const holder = db.dataSource.createQueryRunner();
    try {
      await migration.down(runner);
      expect((await methods()).every((row) => row.method === '')).toBe(true);
      // A long transaction reading `messages` (a report, say): its lock stops the ALTER on that table until it ends.
      await holder.startTransaction();
      await holder.query(`SELECT count(*) FROM messages`);
      const started = Date.now();
      // As openDatabase's executor runs it: in a transaction of its own unless the migration says otherwise.
      const inTransaction = migration.transaction !== false;
      const up = (async () => {
        if (inTransaction) await runner.startTransaction();
        await migration.up(runner);
        if (inTransaction) await runner.commitTransaction();
      })();
      // Meanwhile the tables already done take writes: the migration does not hold their locks.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const insert = new OutboxRepository(db.dataSource).insert(instanceId, [{ eventType: 'messages', payload: { during: true } }]);
      const within = await Promise.race([insert.then(() => 'written'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 1_000))]);
      expect(within).toBe('written');
      // Held past the ALTER's lock wait: it gives up and tries again.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      await holder.commitTransaction();
      await up;
      expect(Date.now() - started).toBeGreaterThan(1_400);
      expect((await methods()).every((row) => row.method === 'l')).toBe(true);
      // The connection went back to the pool as it came.
      expect((await runner.query(`SHOW lock_timeout`))[0].lock_timeout).toBe('0');
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await holder.release();
      await runner.release();
    }
  });

  it('should change nothing on a server built without lz4', async () => {
    const statements: string[] = [];
    const runner = {
      query: async (sql: string) => {
        statements.push(sql);
        return sql.includes('pg_settings') ? [{ lz4: false }] : [];
      },
    } as unknown as QueryRunner;
    await new DocumentsLz41764550000000().up(runner);
    expect(statements).toHaveLength(1);
  });
});
