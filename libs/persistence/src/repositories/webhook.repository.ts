import { RepositoryBase } from './repository-base';

/** How a delivery target is reached: `webhook` is an HTTP POST; the others publish to a message broker (issue #18). */
export type SinkKind = 'webhook' | 'rabbitmq' | 'nats' | 'kafka';
export const SINK_KINDS: readonly SinkKind[] = ['webhook', 'rabbitmq', 'nats', 'kafka'];

export interface WebhookRow {
  id: string;
  instanceId: string | null;
  /** `webhook` for an HTTP receiver; a broker sink otherwise (its `url` is the broker's, credentials and all). */
  kind: SinkKind;
  /** The transport's settings: exchange and routing key, subject prefix and stream, topic… */
  options: Record<string, unknown>;
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

export type WebhookValues = Pick<WebhookRow, 'url' | 'enabled' | 'events' | 'excludeMessages' | 'addUrlEvents' | 'addUrlTypesMessages' | 'includeToken'> &
  Partial<Pick<WebhookRow, 'kind' | 'options'>>;

/** The URL with its password (and a user name that is a token) replaced: for answers, logs and error records. */
export function maskUrlCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*)@/i, (_match, scheme: string, userinfo: string) => {
    const at = userinfo.indexOf(':');
    return at < 0 ? `${scheme}***@` : `${scheme}${userinfo.slice(0, at)}:***@`;
  });
}

type Raw = Record<string, unknown>;

function toRow(raw: Raw): WebhookRow {
  return {
    id: raw.id as string,
    instanceId: (raw.instance_id as string | null) ?? null,
    kind: ((raw.kind as SinkKind | undefined) ?? 'webhook') as SinkKind,
    options: (raw.options as Record<string, unknown> | undefined) ?? {},
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

/** The enabled webhooks an event of these instances may go to (fan-out reads the same in its own statement: DeliveryRepository FAN_OUT_READ). */
export const ENABLED_FOR = `SELECT * FROM webhooks WHERE enabled AND (instance_id IS NULL OR instance_id = ANY($1::text[]))`;

/**
 * Delivery targets: webhooks and broker sinks (`kind`). `instanceId = null` is the global one. Every
 * lookup by scope names its kind, so `/webhook` never sees a sink and a sink route never a webhook.
 */
export class WebhookRepository extends RepositoryBase {
  async listFor(instanceId: string | null, kind: SinkKind = 'webhook'): Promise<WebhookRow[]> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM webhooks WHERE instance_id IS NOT DISTINCT FROM $1 AND kind = $2 ORDER BY created, id`, [
      instanceId,
      kind,
    ]);
    return rows.map(toRow);
  }

  async find(instanceId: string | null, id: string, kind: SinkKind = 'webhook'): Promise<WebhookRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM webhooks WHERE id = $1 AND instance_id IS NOT DISTINCT FROM $2 AND kind = $3`, [
      id,
      instanceId,
      kind,
    ]);
    return rows.length ? toRow(rows[0]) : null;
  }

  async insert(id: string, instanceId: string | null, values: WebhookValues, secret: string): Promise<WebhookRow> {
    const rows: Raw[] = await this.db.query(
      `INSERT INTO webhooks (id, instance_id, url, enabled, events, exclude_messages, add_url_events, add_url_types_messages, include_token, secret, kind, options)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
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
        values.kind ?? 'webhook',
        JSON.stringify(values.options ?? {}),
      ],
    );
    return toRow(rows[0]);
  }

  /**
   * Updates the configuration (of a target of `values.kind`, a webhook when not given); enabling it
   * again also clears its failure state. The options are replaced when given.
   */
  async update(instanceId: string | null, id: string, values: WebhookValues, secret?: string): Promise<WebhookRow | null> {
    const rows: Raw[] = await this.db.query(
      `WITH changed AS (
         UPDATE webhooks SET url = $3, enabled = $4, events = $5, exclude_messages = $6, add_url_events = $7,
           add_url_types_messages = $8, include_token = $9, secret = COALESCE($10, secret), updated = now(),
           options = COALESCE($12::jsonb, options),
           failing_since = CASE WHEN $4 THEN NULL ELSE failing_since END,
           disabled_reason = CASE WHEN $4 THEN '' ELSE disabled_reason END
         WHERE id = $1 AND instance_id IS NOT DISTINCT FROM $2 AND kind = $11 RETURNING *)
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
        values.kind ?? 'webhook',
        values.options ? JSON.stringify(values.options) : null,
      ],
    );
    return rows.length ? toRow(rows[0]) : null;
  }

  async delete(instanceId: string | null, id: string, kind: SinkKind = 'webhook'): Promise<boolean> {
    const rows: Raw[] = await this.db.query(
      `WITH gone AS (DELETE FROM webhooks WHERE id = $1 AND instance_id IS NOT DISTINCT FROM $2 AND kind = $3 RETURNING id) SELECT * FROM gone`,
      [id, instanceId, kind],
    );
    return rows.length > 0;
  }

  /**
   * The global sink an operator configured through env (RABBITMQ_URL…), kept under a fixed id: written
   * over at every start with what env says (enabled again, failure state cleared when the target
   * changed), or removed when env no longer names one.
   */
  async syncEnvSink(id: string, values: (WebhookValues & { kind: SinkKind }) | null, secret: string): Promise<void> {
    if (!values) {
      await this.db.query(`DELETE FROM webhooks WHERE id = $1 AND instance_id IS NULL`, [id]);
      return;
    }
    await this.db.query(
      `INSERT INTO webhooks (id, instance_id, url, enabled, events, exclude_messages, include_token, secret, kind, options)
       VALUES ($1, NULL, $2, true, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, events = EXCLUDED.events, exclude_messages = EXCLUDED.exclude_messages,
         include_token = EXCLUDED.include_token, kind = EXCLUDED.kind, options = EXCLUDED.options, updated = now(),
         enabled = CASE WHEN webhooks.url <> EXCLUDED.url OR webhooks.options <> EXCLUDED.options THEN true ELSE webhooks.enabled END,
         failing_since = CASE WHEN webhooks.url <> EXCLUDED.url OR webhooks.options <> EXCLUDED.options THEN NULL ELSE webhooks.failing_since END,
         disabled_reason = CASE WHEN webhooks.url <> EXCLUDED.url OR webhooks.options <> EXCLUDED.options THEN '' ELSE webhooks.disabled_reason END`,
      [id, values.url, values.events, values.excludeMessages, values.includeToken, secret, values.kind, JSON.stringify(values.options ?? {})],
    );
  }

  /** Enabled webhooks that may receive events of these instances (theirs and the global ones). */
  async enabledFor(instanceIds: string[]): Promise<WebhookRow[]> {
    const rows: Raw[] = await this.db.query(ENABLED_FOR, [instanceIds]);
    return rows.map(toRow);
  }

  /** An instance's own targets of every kind (webhooks and sinks), enabled or not. */
  async ownedBy(instanceId: string): Promise<WebhookRow[]> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM webhooks WHERE instance_id = $1 ORDER BY created, id`, [instanceId]);
    return rows.map(toRow);
  }

  /** The enabled broker sinks (every kind but `webhook`), of every scope: what the relay's connections are for. */
  async enabledSinks(): Promise<WebhookRow[]> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM webhooks WHERE enabled AND kind <> 'webhook'`);
    return rows.map(toRow);
  }

  /** Enabled targets of every kind and scope, at most `limit` (a relay starting reads them before its first claim). */
  async enabled(limit: number): Promise<WebhookRow[]> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM webhooks WHERE enabled ORDER BY id LIMIT $1`, [limit]);
    return rows.map(toRow);
  }

  /** The rows of these webhooks that still exist (one query for a whole claim's webhooks). */
  async byIds(ids: string[]): Promise<WebhookRow[]> {
    if (ids.length === 0) return [];
    const rows: Raw[] = await this.db.query(`SELECT * FROM webhooks WHERE id = ANY($1::text[])`, [ids]);
    return rows.map(toRow);
  }

  async byId(id: string): Promise<WebhookRow | null> {
    const rows: Raw[] = await this.db.query(`SELECT * FROM webhooks WHERE id = $1`, [id]);
    return rows.length ? toRow(rows[0]) : null;
  }
}
