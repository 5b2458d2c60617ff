import { openTestDatabase, type TestDatabase } from '@gw/testing';
import type { QueryRunner } from 'typeorm';
import { InstanceRepository, openDatabase, OutboxRepository } from '@gw/persistence';
import { compressDocumentsWithLz4, LZ4_COLUMNS, lz4Available } from '../src/document-compression';

/**
 * ADR 0071: the documents written on the hot paths (a `messages` event is ~2.5 KB of JSON, over the size at which
 * Postgres compresses a value) are compressed with lz4, not pglz, on a server built with it; set at start-up, never
 * holding a start behind a table's lock. On a server without lz4 (the embedded one) nothing changes.
 */
describe('documents compressed with lz4', () => {
  let db: TestDatabase;
  let lz4 = false;
  const instanceId = 'rlz4';

  beforeAll(async () => {
    db = await openTestDatabase();
    lz4 = await lz4Available(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-lz4-1', name: 'lz4' });
  });
  afterAll(() => db.close());

  /** Each listed column's method: 'l' (lz4), '' (the server's default, pglz). */
  const methods = async () =>
    (await db.dataSource.query(
      `SELECT c.relname AS "table", a.attname AS "column", a.attcompression AS method
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND a.attnum > 0 AND NOT a.attisdropped AND (c.relname, a.attname) IN (${LZ4_COLUMNS.map(([t, c]) => `('${t}', '${c}')`).join(', ')})
        ORDER BY 1, 2`,
      [db.schema],
    )) as Array<{ table: string; column: string; method: string }>;

  /** A connection that answers the step's two questions (lz4 built or not; every column without it) and records each statement. */
  const scriptedRunner = (built: boolean, onStatement: (sql: string) => void = () => undefined) => {
    const statements: string[] = [];
    const runner = {
      query: async (sql: string) => {
        statements.push(sql);
        onStatement(sql);
        if (sql.includes('pg_settings')) return [{ lz4: built }];
        if (sql.includes('pg_attribute')) return LZ4_COLUMNS.map(([table, column]) => ({ table, column, method: '' }));
        return [];
      },
    } as unknown as QueryRunner;
    return { runner, statements };
  };

  const setBack = async () => {
    for (const [table, column] of LZ4_COLUMNS) await db.dataSource.query(`ALTER TABLE ${table} ALTER COLUMN ${column} SET COMPRESSION default`);
  };

  it('should have set lz4 on every listed column at start, when the server has it', async () => {
    // CI's and the development machine's PostgreSQL (Debian's 15) have lz4; only the embedded fallback lacks it.
    if (process.env.CI === 'true') expect(lz4).toBe(true);
    const found = await methods();
    expect(found).toHaveLength(LZ4_COLUMNS.length);
    expect(found.every((row) => row.method === (lz4 ? 'l' : ''))).toBe(true);
  });

  it("should store a messages event's payload compressed as its column says, and read it back as written", async () => {
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
    expect(row.method).toBe(lz4 ? 'lz4' : 'pglz');
    expect(row.payload).toEqual(payload);
  });

  it('should leave a table another transaction holds to the next start, at once, and set it then', async () => {
    if (!lz4) return; // The server keeps pglz: nothing to wait for (the case above checked it changed nothing).
    await setBack();
    const runner = db.dataSource.createQueryRunner();
    const holder = db.dataSource.createQueryRunner();
    try {
      // A long transaction reading `messages` (a report, a pg_dump): its lock stops the ALTER on that table.
      await holder.startTransaction();
      await holder.query(`SELECT count(*) FROM messages`);
      const started = Date.now();
      const first = await compressDocumentsWithLz4(runner);
      // Not held behind the reader: one short lock wait, then the rest is left for later.
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(first).toEqual({ set: ['outbox_events.payload'], left: LZ4_COLUMNS.slice(1).map(([t, c]) => `${t}.${c}`), lz4: true });
      // Nothing is held meanwhile: the reader's table takes statements, the table done takes writes.
      await holder.query(`SELECT count(*) FROM messages`);
      await new OutboxRepository(db.dataSource).insert(instanceId, [{ eventType: 'messages', payload: { during: true } }]);
      // A process starting meanwhile starts, and says what it left.
      const warnings: Array<{ fields: { left?: string[] }; message: string }> = [];
      const started2 = await openDatabase({
        url: db.url,
        schema: db.schema,
        poolSize: 2,
        logger: { warn: (fields, message) => warnings.push({ fields, message }) },
      });
      await started2.destroy();
      expect(warnings).toHaveLength(1);
      expect(warnings[0].fields.left).toContain('messages.raw');
      await holder.commitTransaction();
      const second = await compressDocumentsWithLz4(runner);
      expect(second.left).toEqual([]);
      expect((await methods()).every((row) => row.method === 'l')).toBe(true);
      // Done: a later start changes nothing; the connection went back as it came.
      expect(await compressDocumentsWithLz4(runner)).toEqual({ set: [], left: [], lz4: true });
      expect((await runner.query(`SHOW lock_timeout`))[0].lock_timeout).toBe('0');
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
      await runner.release();
    }
  });

  it('should stop at an ALTER refused (a role that does not own the table), without failing the start', async () => {
    const { runner, statements } = scriptedRunner(true, (sql) => {
      if (sql.startsWith('ALTER TABLE messages')) throw Object.assign(new Error('must be owner of table messages'), { code: '42501' });
    });
    expect(await compressDocumentsWithLz4(runner)).toEqual({
      set: ['outbox_events.payload'],
      left: LZ4_COLUMNS.slice(1).map(([t, c]) => `${t}.${c}`),
      lz4: true,
      error: 'must be owner of table messages',
    });
    // Stopped there; the connection's lock wait set back.
    expect(statements.filter((sql) => sql.startsWith('ALTER'))).toHaveLength(2);
    expect(statements[statements.length - 1]).toBe('RESET lock_timeout');
  });

  it('should change nothing on a server built without lz4', async () => {
    const { runner, statements } = scriptedRunner(false);
    expect(await compressDocumentsWithLz4(runner)).toEqual({ set: [], left: [], lz4: false });
    // Nothing but the question (a server before PostgreSQL 14 has no pg_attribute.attcompression to read).
    expect(statements).toHaveLength(1);
  });
});
