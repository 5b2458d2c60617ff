import { openDatabase } from '@gw/persistence';
import { testDatabaseUrl } from '@gw/testing';
import { randomBytes } from 'node:crypto';

/**
 * DATABASE_POOL_SIZE accepts 1. openDatabase holds a connection for the migration lock while the
 * migrations run: on a second connection, a pool of one waited for itself until pg-pool's connect
 * timeout failed the start (bench/instances' probe, 2026-12-03). They run on the lock holder's.
 */
describe('openDatabase', () => {
  it('should migrate a fresh schema with a pool of one connection, and open it again', async () => {
    const url = await testDatabaseUrl();
    const schema = `pool_of_one_${randomBytes(4).toString('hex')}`;
    const first = await openDatabase({ url, schema, poolSize: 1 });
    try {
      const [{ n }] = (await first.query(`SELECT count(*)::int AS n FROM "${schema}".migrations`)) as Array<{ n: number }>;
      expect(n).toBe(first.migrations.length);
      // Already migrated: a second process of one connection takes the lock, finds nothing to do.
      const second = await openDatabase({ url, schema, poolSize: 1 });
      await second.destroy();
    } finally {
      await first.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await first.destroy();
    }
  }, 60_000);
});
