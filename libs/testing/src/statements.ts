import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';

/**
 * Records the text of every statement TypeORM's query runners send from now on (a jest spy on
 * PostgresQueryRunner.query that still runs them): a spec counts the round trips of what it calls.
 * Empty the array between cases; `jest.restoreAllMocks()` ends the recording.
 */
export function recordStatements(): string[] {
  const statements: string[] = [];
  const query = PostgresQueryRunner.prototype.query;
  jest.spyOn(PostgresQueryRunner.prototype, 'query').mockImplementation(function (this: PostgresQueryRunner, ...args: Parameters<typeof query>) {
    statements.push(args[0]);
    return query.apply(this, args);
  });
  return statements;
}
