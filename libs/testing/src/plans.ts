import type { DataSource } from 'typeorm';

/**
 * The plan Postgres gives `sql` as a prepared statement once it uses its generic plan (the plan every
 * later call of a statement the repositories mark PREPARED runs with), for these parameters: one line of
 * EXPLAIN per array element. A generic plan knows no parameter value, so a partial index it cannot
 * prove covers the query is not used; a spec asserts on the text (an index named, no scan of a table).
 */
export async function genericPlan(dataSource: DataSource, sql: string, parameters: unknown[]): Promise<string> {
  const runner = dataSource.createQueryRunner();
  const name = `generic_plan_${Math.random().toString(16).slice(2)}`;
  // EXECUTE takes literals (untyped, so each is read as its parameter's type).
  const quote = (value: unknown) => `'${String(value).replace(/'/g, "''")}'`;
  const element = (value: unknown) => (value === null ? 'NULL' : `"${String(value).replace(/["\\]/g, '\\$&')}"`);
  const literal = (value: unknown) => (value === null ? 'NULL' : Array.isArray(value) ? quote(`{${value.map(element).join(',')}}`) : quote(value));
  try {
    await runner.query(`SET plan_cache_mode = force_generic_plan`);
    await runner.query(`PREPARE ${name} AS ${sql}`);
    const plan: Array<{ 'QUERY PLAN': string }> = await runner.query(`EXPLAIN EXECUTE ${name}(${parameters.map(literal).join(', ')})`);
    return plan.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await runner.query(`DEALLOCATE ${name}`).catch(() => undefined);
    await runner.query(`RESET plan_cache_mode`).catch(() => undefined);
    await runner.release();
  }
}
