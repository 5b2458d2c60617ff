import type { DataSource, EntityManager } from 'typeorm';

export interface WebhookRow {
  id: string;
  instanceId: string | null;
  url: string;
  enabled: boolean;
  events: string[];
  excludeMessages: string[];
  addUrlEvents: boolean;
  addUrlTypesMessages: boolean;
  includeToken: boolean;
  secret: string;
  failingSince: Date | null;
  disabledReason: string;
  created: Date;
  updated: Date;
}

export type WebhookValues = Pick<WebhookRow, 'url' | 'enabled' | 'events' | 'excludeMessages' | 'addUrlEvents' | 'addUrlTypesMessages' | 'includeToken'>;

type Raw = Record<string, unknown>;

function toRow(raw: Raw): WebhookRow {
  return {
    id: raw.id as string,
    instanceId: (raw.instance_id as string | null) ?? null,
    url: raw.url as string,
    enabled: raw.enabled as boolean,
    events: raw.events as string[],
    excludeMessages: raw.exclude_messages as string[],
    addUrlEvents: raw.add_url_events as boolean,
    addUrlTypesMessages: raw.add_url_types_messages as boolean,
    includeToken: raw.include_token as boolean,
    secret: raw.secret as string,
    failingSince: (raw.failing_since as Date | null) ?? null,
    disabledReason: raw.disabled_reason as string,
    created: raw.created as Date,
    updated: raw.updated as Date,
  };
}

/** Webhook configuration. `instanceId = null` is the global webhook. */
export class WebhookRepository {
  constructor(private readonly dataSource: DataSource) {}

  async listFor(instanceId: string | null): Promise<WebhookRow[]> {
    const rows: Raw[] = await this.dataSource.query(`SELECT * FROM webhooks WHERE instance_id IS NOT DISTINCT FROM $1 ORDER BY created, id`, [instanceId]);
    return rows.map(toRow);
  }

  async find(instanceId: string | null, id: string): Promise<WebhookRow | null> {
    const rows: Raw[] = await this.dataSource.query(`SELECT * FROM webhooks WHERE id = $1 AND instance_id IS NOT DISTINCT FROM $2`, [id, instanceId]);
    return rows.length ? toRow(rows[0]) : null;
  }

  async insert(id: string, instanceId: string | null, values: WebhookValues, secret: string): Promise<WebhookRow> {
    const rows: Raw[] = await this.dataSource.query(
      `INSERT INTO webhooks (id, instance_id, url, enabled, events, exclude_messages, add_url_events, add_url_types_messages, include_token, secret)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
      [
        id,
        instanceId,
        values.url,
        values.enabled,
        values.events,
        values.excludeMessages,
        values.addUrlEvents,
        values.addUrlTypesMessages,
        values.includeToken,
        secret,
      ],
    );
    return toRow(rows[0]);
  }

  /** Updates the configuration; enabling it again also clears its failure state. */
  async update(instanceId: string | null, id: string, values: WebhookValues, secret?: string): Promise<WebhookRow | null> {
    const rows: Raw[] = await this.dataSource.query(
      `WITH changed AS (
         UPDATE webhooks SET url = $3, enabled = $4, events = $5, exclude_messages = $6, add_url_events = $7,
           add_url_types_messages = $8, include_token = $9, secret = COALESCE($10, secret), updated = now(),
           failing_since = CASE WHEN $4 THEN NULL ELSE failing_since END,
           disabled_reason = CASE WHEN $4 THEN '' ELSE disabled_reason END
         WHERE id = $1 AND instance_id IS NOT DISTINCT FROM $2 RETURNING *)
       SELECT * FROM changed`,
      [
        id,
        instanceId,
        values.url,
        values.enabled,
        values.events,
        values.excludeMessages,
        values.addUrlEvents,
        values.addUrlTypesMessages,
        values.includeToken,
        secret ?? null,
      ],
    );
    return rows.length ? toRow(rows[0]) : null;
  }

  async delete(instanceId: string | null, id: string): Promise<boolean> {
    const rows: Raw[] = await this.dataSource.query(
      `WITH gone AS (DELETE FROM webhooks WHERE id = $1 AND instance_id IS NOT DISTINCT FROM $2 RETURNING id) SELECT * FROM gone`,
      [id, instanceId],
    );
    return rows.length > 0;
  }

  /** Enabled webhooks that may receive events of these instances (theirs and the global ones). */
  static async enabledFor(manager: EntityManager, instanceIds: string[]): Promise<WebhookRow[]> {
    const rows: Raw[] = await manager.query(`SELECT * FROM webhooks WHERE enabled AND (instance_id IS NULL OR instance_id = ANY($1::text[]))`, [instanceIds]);
    return rows.map(toRow);
  }

  /** The rows of these webhooks that still exist (one query for a whole claim's webhooks). */
  async byIds(ids: string[]): Promise<WebhookRow[]> {
    if (ids.length === 0) return [];
    const rows: Raw[] = await this.dataSource.query(`SELECT * FROM webhooks WHERE id = ANY($1::text[])`, [ids]);
    return rows.map(toRow);
  }

  async byId(id: string): Promise<WebhookRow | null> {
    const rows: Raw[] = await this.dataSource.query(`SELECT * FROM webhooks WHERE id = $1`, [id]);
    return rows.length ? toRow(rows[0]) : null;
  }
}
