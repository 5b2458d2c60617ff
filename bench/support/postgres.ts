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

/**
 * Gives every chat of `schema` a stored history of `perChat` messages, copies of its oldest one (a minute
 * apart and older, half of them ours, all read): a live deployment's tables hold thousands of messages per
 * instance, a bench's the few its warm-up wrote. Run before analyzeSchema: statistics taken over a warm-up's rows say
 * each instance has one or two messages, so a lookup by (instance, message id) looks as cheap through any
 * index that starts with the instance as through the unique one, and the plans made then read an
 * instance's every message for each lookup as the table grows (docs/bench/send.md, 2026-12-05).
 */
export async function seedHistory(dataSource: Queryable, schema: string, perChat: number): Promise<void> {
  const quoted = `"${schema.replace(/"/g, '""')}"`;
  // The table's insert trigger names its table unqualified, as the services' connections see it.
  await dataSource.query(`${UNCOUNTED} SELECT set_config('search_path', $1, false)`, [quoted]);
  await dataSource.query(
    `${UNCOUNTED} INSERT INTO ${quoted}.messages (instance_id, id, message_id, chat_id, chat_lid, sender, sender_pn, sender_lid, sender_name,
       is_group, from_me, message_type, type, media_type, source, message_timestamp, status, text, content, raw, was_sent_by_api)
     SELECT m.instance_id, 'h' || lpad(to_hex(m.chat * $1::int + g), 7, '0'), 'SEED' || upper(md5(m.message_id || g)), m.chat_id, m.chat_lid,
       m.sender, m.sender_pn, m.sender_lid, m.sender_name, m.is_group, g % 2 = 0, m.message_type, m.type, m.media_type, m.source,
       m.message_timestamp - g * 60000, 'Read', m.text, m.content, m.raw, false
     FROM (SELECT first.*, row_number() OVER (PARTITION BY first.instance_id ORDER BY first.chat_id) AS chat
           FROM (SELECT DISTINCT ON (instance_id, chat_id) * FROM ${quoted}.messages ORDER BY instance_id, chat_id, message_timestamp) first) m,
       generate_series(1, $1::int) g`,
    [perChat],
  );
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
