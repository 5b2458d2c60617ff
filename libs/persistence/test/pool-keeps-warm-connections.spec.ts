import { createDataSource } from '@gw/persistence';
import { testDatabaseUrl } from '@gw/testing';
import type { DataSource } from 'typeorm';

const poolOf = (dataSource: DataSource) => (dataSource.driver as unknown as { master: { totalCount: number } }).master;

/** Opens `count` connections at once (each held until all are open), then gives them back. */
async function openConnections(dataSource: DataSource, count: number): Promise<void> {
  const runners = Array.from({ length: count }, () => dataSource.createQueryRunner());
  await Promise.all(runners.map((runner) => runner.connect()));
  await Promise.all(runners.map((runner) => runner.release()));
}

/** Issue #38: the webhook relay warms its connections at start (planned statements); idle, they must not be closed and come back cold. */
describe('keepConnections', () => {
  // The pool's idle timeout (10 s by default) is 1 s here: which connections it closes does not depend on how long it is.
  it("should keep idle connections open past pg-pool's idle timeout, which closes them otherwise", async () => {
    const url = await testDatabaseUrl();
    const kept = createDataSource({ url, poolSize: 3, keepConnections: true, idleTimeoutMs: 1_000 });
    const plain = createDataSource({ url, poolSize: 3, idleTimeoutMs: 1_000 });
    await Promise.all([kept.initialize(), plain.initialize()]);
    try {
      await Promise.all([openConnections(kept, 3), openConnections(plain, 3)]);
      expect([poolOf(kept).totalCount, poolOf(plain).totalCount]).toEqual([3, 3]);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect([poolOf(kept).totalCount, poolOf(plain).totalCount]).toEqual([3, 0]);
    } finally {
      await Promise.all([kept.destroy(), plain.destroy()]);
    }
  }, 30_000);
});
