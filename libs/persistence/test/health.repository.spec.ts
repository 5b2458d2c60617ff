import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { HealthRepository, MIGRATIONS } from '@gw/persistence';

describe(HealthRepository.name, () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db.close();
  });

  it('should answer a ping while the database is up', async () => {
    await expect(new HealthRepository(db.dataSource).ping()).resolves.toBeUndefined();
  });

  it('should count the migrations the database has applied: all of them once it is migrated', async () => {
    expect(await new HealthRepository(db.dataSource).migrationsApplied()).toBe(MIGRATIONS.length);
  });
});
