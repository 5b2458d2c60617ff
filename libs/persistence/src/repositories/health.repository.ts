import { RepositoryBase } from './repository-base';

/** What a health check asks of Postgres. */
export class HealthRepository extends RepositoryBase {
  /** Resolves when Postgres answers a statement (a pooled connection is free and the server is up). */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  /** How many migrations the database has applied (what `main.js migrate` reports once it has run them). */
  async migrationsApplied(): Promise<number> {
    const [{ count }]: Array<{ count: number }> = await this.db.query(`SELECT count(*)::int AS count FROM migrations`);
    return count;
  }
}
