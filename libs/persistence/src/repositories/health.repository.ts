import type { DataSource } from 'typeorm';

/** What a health check asks of Postgres. */
export class HealthRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Resolves when Postgres answers a statement (a pooled connection is free and the server is up). */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  /** How many migrations the database has applied (what `main.js migrate` reports once it has run them). */
  async migrationsApplied(): Promise<number> {
    const [{ count }]: Array<{ count: number }> = await this.dataSource.query(`SELECT count(*)::int AS count FROM migrations`);
    return count;
  }
}
