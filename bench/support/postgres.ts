import { readFileSync } from 'node:fs';
import type { DataSource } from 'typeorm';
import { UNCOUNTED } from './processes';

/** A connection or pool that runs a statement and answers its rows (a DataSource, a pg client adapted). */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * ANALYZE every table of `schema`: the statistics a live database has (autovacuum analyzes a table within
 * a minute of its first rows). Run after a bench's warm-up: until then every table looks empty, and the
 * plans made meanwhile (the prepared statements' generic plans among them, kept per connection until the
 * statistics change) are not the ones a deployment runs.
 */
export async function analyzeSchema(dataSource: Queryable, schema: string): Promise<void> {
  const tables = (await dataSource.query(`${UNCOUNTED} SELECT tablename FROM pg_tables WHERE schemaname = $1`, [schema])) as Array<{ tablename: string }>;
  for (const { tablename } of tables) await dataSource.query(`${UNCOUNTED} ANALYZE "${schema}"."${tablename.replace(/"/g, '""')}"`);
}

/** The CPU (ms, user + system) of the Postgres server's client backends of this database, by process id. */
export type ServerCpuMark = Map<number, number>;

const TICKS_PER_SECOND = 100;

/**
 * The CPU the server's client backends of this database have used so far (`/proc/<pid>/stat`), or
 * undefined when the server runs on another machine (its processes are not here). Two marks give what
 * the server spent in between: a backend that started in between counts from zero, one that ended is
 * lost (the benches keep their pools open).
 */
export async function serverCpuMark(dataSource: DataSource): Promise<ServerCpuMark | undefined> {
  const rows: Array<{ pid: number }> = await dataSource.query(
    `${UNCOUNTED} SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`,
  );
  const mark: ServerCpuMark = new Map();
  for (const { pid } of rows) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // The fields after the command (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    mark.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND);
  }
  return mark.size > 0 ? mark : undefined;
}

/** The server's CPU (ms) between two marks. */
export function serverCpuBetween(from: ServerCpuMark | undefined, to: ServerCpuMark | undefined): number | undefined {
  if (!from || !to) return undefined;
  let ms = 0;
  for (const [pid, cpu] of to) ms += cpu - (from.get(pid) ?? 0);
  return ms;
}
