import { createHash } from 'node:crypto';
import { Client } from 'pg';

/**
 * Marks a statement for preparing (anywhere in its text): a statement run often whose plan does not
 * depend on its parameters (lookups and writes by key). Not for statements whose best plan does
 * (LIMIT, ranges over a backlog): a prepared statement soon runs a generic plan, and the relay's claim
 * run that way fell from 8,900 to 630 deliveries/s.
 */
export const PREPARED = '/* prepared */';

/**
 * A pg Client that sends the statements marked PREPARED as named (prepared) statements once this
 * process has run them a few times, so Postgres plans each once per connection (a generic plan)
 * instead of on every call.
 *
 * Why: TypeORM sends every statement unnamed, and Postgres plans an unnamed statement each time. On
 * the send path that planning was ~40% of Postgres' statement time (pg_stat_statements over
 * bench/send); with this client, Postgres CPU per send fell by about half (machine CPU per send
 * 12.6 → 10.0 ms, sends/s +23%).
 *
 * What is prepared: a marked statement with parameters once it has been seen `HOT_AFTER` times in
 * this process, at most `MAX_STATEMENTS` distinct texts (each one costs a plan on every pooled
 * connection). Same text, same name: the name is a hash of the text. The marked ones: the lease
 * fence (every fenced single statement: the send ledger, Signal key writes), the message insert,
 * status advance and lookup by id, the inbound group's own copies, the outbox insert, the chat
 * update, the contact check, LID mappings, key reads.
 *
 * A prepared `SELECT *` / `RETURNING *` fails once its table gains or loses a column (a migration
 * run by a newer version during a rolling deploy): Postgres answers "cached plan must not change
 * result type" (0A000). The text then gets a new name (prepared afresh on each connection) and the
 * call is tried again once; inside a transaction that retry fails like any statement after an error,
 * and the caller sees the transaction fail once, with the stale-plan error (isStalePlan: it may run the
 * transaction again).
 *
 * DATABASE_PREPARED_STATEMENTS=false turns it off (a connection pooler in transaction mode that does
 * not track prepared statements, e.g. PgBouncer before 1.21).
 */
export class PreparingClient extends Client {
  override query(...call: unknown[]): never {
    const [config, values, callback] = call;
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && callback === undefined && config.includes(PREPARED)) {
      const name = preparedStatements.nameFor(config);
      if (name) return this.named(config, values, name) as never;
    }
    return (Client.prototype.query as (...args: unknown[]) => never).apply(this, call);
  }

  private async named(text: string, values: unknown[], name: string): Promise<unknown> {
    const run = (as: string) => (Client.prototype.query as (config: unknown) => Promise<unknown>).call(this, { name: as, text, values });
    try {
      return await run(name);
    } catch (error) {
      if (!isStalePlan(error)) throw error;
      try {
        return await run(preparedStatements.renew(text));
      } catch (retried) {
        // Inside a transaction the retry only meets the aborted transaction (25P02): the caller sees
        // the stale plan itself, and may run its transaction again (the text has its new name now).
        throw (retried as { code?: string })?.code === '25P02' ? error : retried;
      }
    }
  }
}

/** Postgres refused a prepared plan whose result type changed (a migration added or dropped a column). */
export function isStalePlan(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return code === '0A000' && /cached plan must not change result type/.test(message ?? '');
}

/** Which texts are hot enough to prepare, and under what name (process-wide, shared by every pool). */
export class PreparedStatementNames {
  private readonly seen = new Map<string, number>();
  private readonly names = new Map<string, string>();

  constructor(
    private readonly hotAfter: number,
    private readonly maxStatements: number,
    /** Texts counted but not yet hot, at most (a bound on memory when texts are built dynamically). */
    private readonly maxCounted = 10_000,
  ) {}

  /** The name to run `text` under, or null to run it unnamed. */
  nameFor(text: string): string | null {
    const known = this.names.get(text);
    if (known) return known;
    if (this.names.size >= this.maxStatements) return null;
    const count = (this.seen.get(text) ?? 0) + 1;
    if (count < this.hotAfter) {
      if (this.seen.size >= this.maxCounted) this.seen.clear();
      this.seen.set(text, count);
      return null;
    }
    this.seen.delete(text);
    const name = `gw_${hash(text)}_0`;
    this.names.set(text, name);
    return name;
  }

  /** A new name for `text` after its prepared plan went stale (the old one is left unused). */
  renew(text: string): string {
    const current = this.names.get(text) ?? `gw_${hash(text)}_0`;
    const generation = Number(current.slice(current.lastIndexOf('_') + 1)) + 1;
    const name = `gw_${hash(text)}_${generation}`;
    this.names.set(text, name);
    return name;
  }

  get size(): number {
    return this.names.size;
  }
}

function hash(text: string): string {
  return createHash('sha1').update(text).digest('hex').slice(0, 24);
}

const HOT_AFTER = 3;
const MAX_STATEMENTS = 300;
export const preparedStatements = new PreparedStatementNames(HOT_AFTER, MAX_STATEMENTS);
