import type { DataSource } from 'typeorm';

type Query = (this: unknown, query: string, ...rest: unknown[]) => Promise<unknown>;

/**
 * Records the text of every statement the data source's query runners send from now on (a jest spy on
 * their class's `query` that still runs them): a spec counts the round trips of what it calls. Empty
 * the array between cases; `jest.restoreAllMocks()` ends the recording.
 */
export async function recordStatements(dataSource: DataSource): Promise<string[]> {
  const statements: string[] = [];
  const runner = dataSource.createQueryRunner();
  const prototype = Object.getPrototypeOf(runner) as { query: Query };
  await runner.release();
  const query = prototype.query;
  jest.spyOn(prototype, 'query').mockImplementation(function (this: unknown, ...args: Parameters<Query>) {
    statements.push(args[0]);
    return query.apply(this, args);
  });
  return statements;
}
