import { RepositoryBase } from './repository-base';

type Raw = Record<string, unknown>;

/** One audited change, as the gateway records it (secrets already masked). */
export interface NewAuditEntry {
  /** The instance's id for an instance token, `admin` for the admin token. */
  actor: string;
  /** The instance the change is about; null for a global one (global webhook, sinks, restart). */
  instanceId: string | null;
  address: string;
  method: string;
  route: string;
  action: string;
  changes: Record<string, unknown>;
  status: number;
}

export interface AuditRow extends NewAuditEntry {
  id: string;
  at: Date;
}

export interface AuditFilter {
  instanceId?: string;
  action?: string;
  route?: string;
  from?: Date;
  to?: Date;
  /** Entries older than this id (the previous page's `next_cursor`). */
  before?: string;
  limit: number;
  offset: number;
}

/** The audit log (audit_log): written after each audited request, read newest first (the retention purge removes old ones: RetentionRepository). */
export class AuditRepository extends RepositoryBase {
  async insert(entry: NewAuditEntry): Promise<void> {
    await this.db.query(`INSERT INTO audit_log (actor, instance_id, address, method, route, action, changes, status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      entry.actor,
      entry.instanceId,
      entry.address,
      entry.method,
      entry.route,
      entry.action,
      JSON.stringify(entry.changes),
      entry.status,
    ]);
  }

  /** The entries matching `filter`, newest first, and how many match in all. */
  async find(filter: AuditFilter): Promise<{ rows: AuditRow[]; total: number }> {
    const where: string[] = [];
    const values: unknown[] = [];
    const add = (clause: (parameter: string) => string, value: unknown) => {
      values.push(value);
      where.push(clause(`$${values.length}`));
    };
    if (filter.instanceId !== undefined) add((p) => `instance_id = ${p}`, filter.instanceId);
    if (filter.action !== undefined) add((p) => `action = ${p}`, filter.action);
    if (filter.route !== undefined) add((p) => `route = ${p}`, filter.route);
    if (filter.from !== undefined) add((p) => `at >= ${p}`, filter.from);
    if (filter.to !== undefined) add((p) => `at <= ${p}`, filter.to);
    const counted = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const [{ n }]: Array<{ n: string }> = await this.db.query(`SELECT count(*) AS n FROM audit_log ${counted}`, values);
    if (filter.before !== undefined) add((p) => `id < ${p}`, filter.before);
    const paged = where.length ? `WHERE ${where.join(' AND ')}` : '';
    values.push(filter.limit, filter.offset);
    const rows: Raw[] = await this.db.query(
      `SELECT id, at, actor, instance_id, address, method, route, action, changes, status FROM audit_log ${paged}
       ORDER BY id DESC LIMIT $${values.length - 1} OFFSET $${values.length}`,
      values,
    );
    return { rows: rows.map(toRow), total: Number(n) };
  }
}

function toRow(raw: Raw): AuditRow {
  return {
    id: String(raw.id),
    at: raw.at as Date,
    actor: raw.actor as string,
    instanceId: (raw.instance_id as string | null) ?? null,
    address: raw.address as string,
    method: raw.method as string,
    route: raw.route as string,
    action: raw.action as string,
    changes: (raw.changes as Record<string, unknown>) ?? {},
    status: raw.status as number,
  };
}
