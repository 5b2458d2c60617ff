import type { Tx } from '@gw/persistence';
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
  try {
    await runner.query(`SET plan_cache_mode = force_generic_plan`);
    await runner.query(`PREPARE ${name} AS ${sql}`);
    const plan: Array<{ 'QUERY PLAN': string }> = await runner.query(`EXPLAIN EXECUTE ${name}(${executeArguments(parameters)})`);
    return plan.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    await runner.query(`DEALLOCATE ${name}`).catch(() => undefined);
    await runner.query(`RESET plan_cache_mode`).catch(() => undefined);
    await runner.release();
  }
}

/**
 * How Postgres planned `sql` as a prepared statement run `times` times with these parameters, on one
 * connection, with the server's own choice (plan_cache_mode auto): custom plans (made for the values
 * of each call) and generic ones (made once, reused). A statement whose generic plan looks dearer than
 * a plan made for its values is planned again on every call; one Postgres settles on shows at most
 * five custom plans (the first calls), the rest generic.
 */
export async function planChoices(dataSource: DataSource, sql: string, parameters: unknown[], times = 10): Promise<{ custom: number; generic: number }> {
  const runner = dataSource.createQueryRunner();
  const name = `plan_choices_${Math.random().toString(16).slice(2)}`;
  try {
    await runner.query(`PREPARE ${name} AS ${sql}`);
    for (let call = 0; call < times; call++) await runner.query(`EXECUTE ${name}(${executeArguments(parameters)})`);
    const [row]: Array<{ custom: string; generic: string }> = await runner.query(
      `SELECT custom_plans AS custom, generic_plans AS generic FROM pg_prepared_statements WHERE name = $1`,
      [name],
    );
    return { custom: Number(row.custom), generic: Number(row.generic) };
  } finally {
    await runner.query(`DEALLOCATE ${name}`).catch(() => undefined);
    await runner.release();
  }
}

/**
 * A stand-in for a repository's connection (`repository.within(capturing.tx)`): records each statement
 * and its parameters and answers `answer(sql)` (no rows by default), so a spec can plan exactly what a
 * repository method sends.
 */
export function capturingTx(answer: (sql: string) => unknown[] = () => []): { tx: Tx; captured: Array<[string, unknown[]]> } {
  const captured: Array<[string, unknown[]]> = [];
  const tx = {
    query: async (sql: string, parameters?: unknown[]): Promise<unknown> => {
      captured.push([sql, parameters ?? []]);
      return answer(sql);
    },
  };
  return { captured, tx: tx as unknown as Tx };
}

/** A node of `EXPLAIN (ANALYZE, FORMAT JSON)`'s plan, as far as rowsRead() reads it. */
export interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Every row the scans of `relation` in an executed plan produced or filtered out, over all their loops. */
export function rowsRead(node: PlanNode, relation: string): number {
  const own =
    node['Relation Name'] === relation
      ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * (node['Actual Loops'] ?? 1)
      : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsRead(child, relation), 0);
}

/**
 * `EXPLAIN (ANALYZE, FORMAT JSON)` of `sql` inside a transaction rolled back after (what it writes is
 * undone): the executed plan's root node.
 */
export async function executedPlan(dataSource: DataSource, sql: string, parameters: unknown[]): Promise<PlanNode> {
  const runner = dataSource.createQueryRunner();
  await runner.startTransaction();
  try {
    const [{ 'QUERY PLAN': plan }] = (await runner.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, parameters)) as Array<{
      'QUERY PLAN': Array<{ Plan: PlanNode }>;
    }>;
    return plan[0].Plan;
  } finally {
    await runner.rollbackTransaction();
    await runner.release();
  }
}

/** EXECUTE's arguments: literals (untyped, so each is read as its parameter's type). */
function executeArguments(parameters: unknown[]): string {
  const quote = (value: unknown) => `'${String(value).replace(/'/g, "''")}'`;
  const element = (value: unknown) => (value === null ? 'NULL' : `"${String(value).replace(/["\\]/g, '\\$&')}"`);
  const literal = (value: unknown) => (value === null ? 'NULL' : Array.isArray(value) ? quote(`{${value.map(element).join(',')}}`) : quote(value));
  return parameters.map(literal).join(', ');
}
