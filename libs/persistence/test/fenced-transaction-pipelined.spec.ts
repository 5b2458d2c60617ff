import { createDataSource, FencedOutError, InstanceRepository, LeaseRepository, OutboxCursorRepository, OutboxRepository, type Lease } from '@gw/persistence';
import { openTestDatabase, startLatencyProxy, withEnv, type LatencyProxy, type TestDatabase } from '@gw/testing';
import type { DataSource } from 'typeorm';

/**
 * The fenced transactions of the inbound store, pipelined (ADR 0023): the proof goes out with the
 * work's first statement, the tail (the outbox insert) with the COMMIT. Counted in round trips through
 * a proxy 2 × 40 ms away (Postgres on another machine): a run of chunks towards Postgres is one. An
 * outbox cursor's step sends its START TRANSACTION with its first statement.
 */
describe('fenced transactions, pipelined', () => {
  let db: TestDatabase;
  let proxy: LatencyProxy;
  let lease: Lease;
  const opened: DataSource[] = [];

  /** A pool of one connection through the proxy, created with DATABASE_PIPELINE as given. */
  const farPool = async (pipeline?: string): Promise<DataSource> => {
    const dataSource = withEnv('DATABASE_PIPELINE', pipeline, () => createDataSource({ url: proxy.rewrite(db.url), schema: db.schema, poolSize: 1 }));
    opened.push(dataSource);
    return dataSource.initialize();
  };
  /** Round trips since the last `proxy.chunks` reset: the runs of chunks going up. */
  const roundTrips = () => proxy.chunks.filter((chunk, index) => chunk.direction === 'up' && proxy.chunks[index - 1]?.direction !== 'up').length;
  const probes = async () =>
    ((await db.dataSource.query(`SELECT id, note FROM fence_probe ORDER BY id`)) as Array<{ id: number; note: string }>).map((row) => `${row.id}:${row.note}`);
  const idleAborted = async () =>
    (
      (await db.dataSource.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
      )) as Array<{ n: number }>
    )[0].n;
  /** A write and its tail: the write inserts `id`, the tail `id + 1000` and returns it. */
  const writeWithTail = (dataSource: DataSource, of: Lease, id: number, tailText = `INSERT INTO fence_probe (id, note) VALUES ($1, 'tail') RETURNING id`) => {
    const tailRows: unknown[][] = [];
    const done = LeaseRepository.fencedTransaction(
      dataSource,
      of,
      (manager) => manager.query(`INSERT INTO fence_probe (id, note) VALUES ($1, 'work')`, [id]).then(() => id),
      (value) => ({ text: tailText, values: [value + 1000], rows: (rows) => tailRows.push(rows) }),
    );
    return { done, tailRows };
  };

  beforeAll(async () => {
    db = await openTestDatabase();
    const { hostname, port } = new URL(db.url);
    proxy = await startLatencyProxy({ host: hostname, port: Number(port || 5432) }, 40, { record: true });
    await db.dataSource.query(`CREATE TABLE fence_probe (id int PRIMARY KEY, note text NOT NULL)`);
    await new InstanceRepository(db.dataSource).create({ id: 'i-pipe', token: 'token-i-pipe', name: 'i-pipe' });
    lease = (await new LeaseRepository(db.dataSource).claim('i-pipe', 'w1', 60_000))!;
  });
  afterEach(() => db.dataSource.query(`DELETE FROM fence_probe`));
  afterAll(async () => {
    for (const dataSource of opened) await dataSource.destroy();
    await proxy.close();
    await db.close();
  });

  it('should prove the lease, write and commit with its tail in two round trips (four when each waits), the tail’s rows given after the commit', async () => {
    for (const [pipeline, expected] of [
      [undefined, 2],
      ['false', 4],
    ] as const) {
      const dataSource = await farPool(pipeline);
      await dataSource.query('SELECT 1');
      proxy.chunks.length = 0;
      const id = pipeline ? 2 : 1;
      const { done, tailRows } = writeWithTail(dataSource, lease, id);
      expect(await done).toBe(id);
      expect(roundTrips()).toBe(expected);
      expect(tailRows).toEqual([[{ id: id + 1000 }]]);
    }
    expect(await probes()).toEqual(['1:work', '2:work', '1001:tail', '1002:tail']);
  });

  /** Counts the writes (system calls) of the pool-of-one connection's socket from now on. */
  const countWrites = async (dataSource: DataSource): Promise<{ writes: number }> => {
    const pool = (dataSource.driver as unknown as { master: { connect(): Promise<{ connection: { stream: Record<string, unknown> }; release(): void }> } })
      .master;
    const client = await pool.connect();
    const stream = client.connection.stream as Record<'_write' | '_writev', (...call: unknown[]) => unknown>;
    client.release();
    const counted = { writes: 0 };
    for (const method of ['_write', '_writev'] as const) {
      const original = stream[method];
      stream[method] = function (this: unknown, ...call: unknown[]) {
        counted.writes++;
        return original.apply(this, call);
      };
    }
    return counted;
  };

  it('should write the begin and proof with the work’s first statement and the tail with the COMMIT: one write each', async () => {
    const dataSource = await farPool();
    await dataSource.query('SELECT 1');
    const counted = await countWrites(dataSource);
    expect(await writeWithTail(dataSource, lease, 50).done).toBe(50);
    // Before (session 59): the head, the statement, the tail and the COMMIT each a write of its own.
    expect(counted.writes).toBe(2);
    // A work that waits for the proof before its first statement: the head goes at the next turn of the loop.
    counted.writes = 0;
    const waited = await LeaseRepository.fencedGroupTransaction(dataSource, [lease], async (manager) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await manager.query(`INSERT INTO fence_probe (id, note) VALUES (51, 'late')`);
      return 51;
    });
    expect(waited).toBe(51);
    expect(counted.writes).toBe(3);
    // A work that fails before any statement: the head and the ROLLBACK go, the connection is clean.
    await expect(
      LeaseRepository.fencedTransaction(dataSource, lease, () => {
        throw new Error('before any statement');
      }),
    ).rejects.toThrow('before any statement');
    expect(await idleAborted()).toBe(0);
    expect(await writeWithTail(dataSource, lease, 52).done).toBe(52);
    expect(await probes()).toEqual(['50:work', '51:late', '52:work', '1050:tail', '1052:tail']);
  });

  it('should roll the work back when its tail fails, throw the tail’s error and leave the connection clean for the next', async () => {
    const dataSource = await farPool();
    await db.dataSource.query(`INSERT INTO fence_probe (id, note) VALUES (1005, 'there')`);
    const failed = writeWithTail(dataSource, lease, 5);
    await expect(failed.done).rejects.toMatchObject({ code: '23505' });
    expect(failed.tailRows).toEqual([]);
    expect(await idleAborted()).toBe(0);
    expect(await writeWithTail(dataSource, lease, 6).done).toBe(6);
    expect(await probes()).toEqual(['6:work', '1005:there', '1006:tail']);
  });

  it('should not run a tail again after its COMMIT when its prepared plan went stale, and prepare it afresh for the next transaction', async () => {
    const dataSource = await farPool();
    const tailText = `/* prepared */ INSERT INTO fence_probe (id, note) SELECT $1, 'tail' RETURNING *`;
    for (const id of [10, 11, 12, 13]) await writeWithTail(dataSource, lease, id, tailText).done;
    // A rolling deploy's migration: the prepared `RETURNING *` now answers another row type.
    await db.dataSource.query(`ALTER TABLE fence_probe ADD COLUMN extra int`);
    try {
      const stale = writeWithTail(dataSource, lease, 20, tailText);
      await expect(stale.done).rejects.toMatchObject({ code: '0A000' });
      // Neither the work nor a retried tail were written: the COMMIT behind the failed tail rolled back.
      expect((await probes()).filter((row) => row.startsWith('20') || row.startsWith('1020'))).toEqual([]);
      expect(await idleAborted()).toBe(0);
      const next = writeWithTail(dataSource, lease, 21, tailText);
      expect(await next.done).toBe(21);
      expect(next.tailRows).toEqual([[{ id: 1021, note: 'tail', extra: null }]]);
    } finally {
      await db.dataSource.query(`ALTER TABLE fence_probe DROP COLUMN extra`);
    }
  });

  it('should commit nothing of the work and throw FencedOutError when the lease was taken over', async () => {
    const dataSource = await farPool();
    const stale = { ...lease, fencingToken: String(Number(lease.fencingToken) + 7) };
    const { done, tailRows } = writeWithTail(dataSource, stale, 30);
    await expect(done).rejects.toBeInstanceOf(FencedOutError);
    expect(tailRows).toEqual([]);
    expect(await probes()).toEqual([]);
    expect(await idleAborted()).toBe(0);
  });

  it('should step an outbox cursor (begin, lock, read and move, handler, commit) in two round trips', async () => {
    const dataSource = await farPool();
    const cursors = new OutboxCursorRepository(dataSource);
    await cursors.follow('pipe-probe', ['i-pipe']);
    await db.dataSource.transaction((manager) =>
      new OutboxRepository(db.dataSource).within(manager).insert('i-pipe', [{ eventType: 'messages', payload: { n: 1 } }]),
    );
    proxy.chunks.length = 0;
    const step = await cursors.step('pipe-probe', 'i-pipe', 10, async (_manager, _instanceId, events) => events.map((event) => event.payload));
    expect(step).toMatchObject({ read: 1, handled: [{ n: 1 }] });
    expect(roundTrips()).toBe(2);
  });

  it('should run a group whose proof found a lease gone once more, told only the held ones, the first run rolled back', async () => {
    const dataSource = await farPool();
    const gone = { instanceId: 'i-pipe-gone', workerId: 'w1', fencingToken: '1' };
    const told: string[][] = [];
    const written = await LeaseRepository.fencedGroupTransaction(
      dataSource,
      [lease, gone],
      async (manager, held) => {
        told.push([...held].sort());
        for (const [index, id] of [...held].sort().entries()) await manager.query(`INSERT INTO fence_probe (id, note) VALUES ($1, $2)`, [40 + index, id]);
        return held.size;
      },
      (count) => ({ text: `INSERT INTO fence_probe (id, note) VALUES ($1, 'tail')`, values: [1040 + count] }),
    );
    expect(told).toEqual([['i-pipe', 'i-pipe-gone'], ['i-pipe']]);
    expect(written).toBe(1);
    expect(await probes()).toEqual(['40:i-pipe', '1041:tail']);
  });
});
