import { createDataSource } from '@gw/persistence';
import { openTestDatabase, startLatencyProxy, withEnv, type LatencyProxy, type TestDatabase } from '@gw/testing';
import type { DataSource } from 'typeorm';

/**
 * Statements issued on a connection that is still busy (the inbound group runs several instances'
 * writes on its one connection at a time) go out at once and are answered in order: pg's pipeline
 * mode (DATABASE_PIPELINE, default on), through a proxy 2 × 40 ms of round trip away, as a
 * Postgres on another machine.
 */
describe('statements on a busy connection (pipelined)', () => {
  let db: TestDatabase;
  let proxy: LatencyProxy;
  const opened: DataSource[] = [];
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);

  /** A pool of one connection through the proxy, created with DATABASE_PIPELINE as given. */
  const farPool = async (pipeline?: string): Promise<DataSource> => {
    const dataSource = withEnv('DATABASE_PIPELINE', pipeline, () => createDataSource({ url: proxy.rewrite(db.url), schema: db.schema, poolSize: 1 }));
    opened.push(dataSource);
    return dataSource.initialize();
  };
  /** The five statements at once on one connection; whether all of them left before the first answer came back. */
  const fiveAtOnce = async (dataSource: DataSource) => {
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT 1');
      proxy.chunks.length = 0;
      const results = await Promise.all([1, 2, 3, 4, 5].map((n) => runner.query('SELECT $1::int AS n', [n])));
      const directions = proxy.chunks.map((chunk) => chunk.direction);
      return { results, oneRoundTrip: directions.lastIndexOf('up') < directions.indexOf('down') };
    } finally {
      await runner.release();
    }
  };

  beforeAll(async () => {
    db = await openTestDatabase();
    const { hostname, port } = new URL(db.url);
    proxy = await startLatencyProxy({ host: hostname, port: Number(port || 5432) }, 40, { record: true });
    await db.dataSource.query(`CREATE TABLE pipeline_probe (id int PRIMARY KEY)`);
    process.on('warning', onWarning);
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    for (const dataSource of opened) await dataSource.destroy();
    await proxy.close();
    await db.close();
  });

  it('should send them all before the first answer comes back, each answered with its own result, without pg deprecation warnings', async () => {
    const { results, oneRoundTrip } = await fiveAtOnce(await farPool());
    expect(results).toEqual([1, 2, 3, 4, 5].map((n) => [{ n }]));
    expect(oneRoundTrip).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((warning) => warning.includes('already executing a query'))).toEqual([]);
  });

  it('should wait for each answer before sending the next with DATABASE_PIPELINE=false (five round trips)', async () => {
    const { results, oneRoundTrip } = await fiveAtOnce(await farPool('false'));
    expect(results).toEqual([1, 2, 3, 4, 5].map((n) => [{ n }]));
    expect(oneRoundTrip).toBe(false);
  });

  it('should fail only the failing statement outside a transaction', async () => {
    const dataSource = await farPool();
    const [failed, next] = await Promise.allSettled([dataSource.query('SELECT 1 / $1::int AS x', [0]), dataSource.query('SELECT 2 AS n')]);
    expect(failed).toMatchObject({ status: 'rejected', reason: { driverError: { code: '22012' } } });
    expect(next).toEqual({ status: 'fulfilled', value: [{ n: 2 }] });
  });

  it('should fail the statements behind an error in a transaction, roll it all back and leave the connection usable', async () => {
    const dataSource = await farPool();
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const settled = await Promise.allSettled([
        runner.query('INSERT INTO pipeline_probe (id) VALUES (1)'),
        runner.query('SELECT 1 / $1::int AS x', [0]),
        runner.query('INSERT INTO pipeline_probe (id) VALUES (2)'),
      ]);
      expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
      // 25P02: current transaction is aborted, commands ignored until end of transaction block.
      expect(settled[2]).toMatchObject({ reason: { driverError: { code: '25P02' } } });
      await runner.rollbackTransaction();
      expect(await runner.query('SELECT count(*)::int AS n FROM pipeline_probe')).toEqual([{ n: 0 }]);
    } finally {
      await runner.release();
    }
  });

  it('should fail every statement in flight when the connection is lost (none left waiting), and serve the next one on a new connection', async () => {
    const dataSource = await farPool();
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    const inFlight = Promise.allSettled([runner.query('SELECT pg_sleep(0.5)'), runner.query('SELECT 2 AS n'), runner.query('SELECT 3 AS n')]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    proxy.cut();
    const settled = await Promise.race([inFlight, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5_000))]);
    expect(settled).not.toBe('hung');
    expect((settled as PromiseSettledResult<unknown>[]).map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    await runner.release();
    expect(await dataSource.query('SELECT 4 AS n')).toEqual([{ n: 4 }]);
  });

  it('should be on by default and off with DATABASE_PIPELINE=false; anything else is refused', () => {
    const pipelineOf = (value: string | undefined) =>
      withEnv('DATABASE_PIPELINE', value, () => (createDataSource({ url: db.url }).options as { extra: { pipeline?: boolean } }).extra.pipeline);
    expect(pipelineOf(undefined)).toBe(true);
    expect(pipelineOf('true')).toBe(true);
    expect(pipelineOf('false')).toBe(false);
    expect(() => pipelineOf('maybe')).toThrow('DATABASE_PIPELINE must be true or false, not "maybe"');
  });
});
