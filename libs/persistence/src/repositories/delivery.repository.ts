import type { DataSource } from 'typeorm';
import { WebhookRepository, type WebhookRow } from './webhook.repository';

export interface OutboxEvent {
  id: string;
  instanceId: string;
  eventType: string;
  chatId: string;
  payload: Record<string, unknown>;
}

export interface DeliveryClaim {
  deliveryId: string;
  attempt: number;
  event: OutboxEvent;
  webhookId: string;
}

export interface DeliveryErrorRecord {
  webhookId: string;
  instanceId: string | null;
  global: boolean;
  url: string;
  event: string;
  messageType: string;
  statusCode: number | null;
  attempts: number;
  error: string;
  payload: Record<string, unknown>;
}

type Raw = Record<string, unknown>;

/**
 * Durable webhook deliveries.
 *
 * - Fan-out: each undispatched outbox event gets one delivery row per matching webhook, and is marked
 *   dispatched, in one transaction (`SKIP LOCKED` lets several relays fan out side by side). A crash
 *   before commit leaves the event undispatched: it is fanned out again, and `UNIQUE (webhook_id,
 *   event_id)` absorbs a repeat.
 * - Lanes: deliveries of one (webhook, instance, chat) go out in id order; only the oldest pending
 *   delivery of a lane can be claimed, so a retrying head holds its lane back and nothing overtakes it.
 * - Claims: a claim sets `claimed_until`; a relay that dies mid-request leaves the claim to lapse and
 *   the delivery is sent again (same `webhook-id`, so receivers can deduplicate).
 */
export class DeliveryRepository {
  constructor(private readonly dataSource: DataSource) {}

  async fanOut(limit: number, match: (event: OutboxEvent, webhooks: WebhookRow[]) => WebhookRow[]): Promise<{ events: number; deliveries: number }> {
    return this.dataSource.transaction(async (manager) => {
      const raw: Raw[] = await manager.query(
        `SELECT id, instance_id, event_type, chat_id, payload FROM outbox_events
         WHERE dispatched_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      if (raw.length === 0) return { events: 0, deliveries: 0 };
      const events = raw.map(toEvent);
      const webhooks = await WebhookRepository.enabledFor(manager, [...new Set(events.map((event) => event.instanceId))]);
      const columns = { webhook: [] as string[], event: [] as string[], instance: [] as string[], chat: [] as string[], type: [] as string[] };
      for (const event of events) {
        for (const webhook of match(event, webhooks)) {
          columns.webhook.push(webhook.id);
          columns.event.push(event.id);
          columns.instance.push(event.instanceId);
          columns.chat.push(event.chatId);
          columns.type.push(event.eventType);
        }
      }
      if (columns.webhook.length) {
        await manager.query(
          `INSERT INTO webhook_deliveries (webhook_id, event_id, instance_id, chat_id, event_type)
           SELECT w, e, i, c, t FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(w, e, i, c, t, n)
           ORDER BY n
           ON CONFLICT (webhook_id, event_id) DO NOTHING`,
          [columns.webhook, columns.event, columns.instance, columns.chat, columns.type],
        );
      }
      await manager.query(`UPDATE outbox_events SET dispatched_at = now() WHERE id = ANY($1::bigint[])`, [events.map((event) => event.id)]);
      return { events: events.length, deliveries: columns.webhook.length };
    });
  }

  /**
   * Claims due lane heads, counting the attempt, at most `perWebhook` per webhook: a relay claims only
   * what it can send now (claiming more and releasing the rest costs a write each, and thrashes).
   */
  async claimDue(limit: number, claimMs: number, excludeWebhooks: string[] = [], perWebhook = limit): Promise<DeliveryClaim[]> {
    const rows: Raw[] = await this.dataSource.query(
      `WITH candidates AS (
         SELECT d.id, d.webhook_id FROM webhook_deliveries d
         WHERE d.status = 'pending' AND d.next_attempt_at <= now()
           AND (d.claimed_until IS NULL OR d.claimed_until < now())
           AND NOT (d.webhook_id = ANY($3::text[]))
           AND NOT EXISTS (
             SELECT 1 FROM webhook_deliveries e
             WHERE e.status = 'pending' AND e.webhook_id = d.webhook_id AND e.instance_id = d.instance_id
               AND e.chat_id = d.chat_id AND e.id < d.id)
         ORDER BY d.id
         LIMIT $1 * 4),
       ranked AS (
         SELECT id, row_number() OVER (PARTITION BY webhook_id ORDER BY id) AS n FROM candidates),
       heads AS (
         SELECT d.id FROM webhook_deliveries d JOIN ranked r ON r.id = d.id
         WHERE r.n <= $4 AND d.status = 'pending' AND (d.claimed_until IS NULL OR d.claimed_until < now())
         ORDER BY d.id
         LIMIT $1
         FOR UPDATE OF d SKIP LOCKED),
       claimed AS (
         UPDATE webhook_deliveries SET claimed_until = now() + ($2 || ' milliseconds')::interval, attempts = attempts + 1
         FROM heads WHERE webhook_deliveries.id = heads.id
         RETURNING webhook_deliveries.id, webhook_deliveries.webhook_id, webhook_deliveries.event_id, webhook_deliveries.attempts)
       SELECT c.id, c.webhook_id, c.attempts, o.id AS event_id, o.instance_id, o.event_type, o.chat_id, o.payload
       FROM claimed c JOIN outbox_events o ON o.id = c.event_id
       ORDER BY c.id`,
      [limit, String(claimMs), excludeWebhooks, Math.max(1, perWebhook)],
    );
    return rows.map((row) => ({
      deliveryId: String(row.id),
      webhookId: row.webhook_id as string,
      attempt: Number(row.attempts),
      event: toEvent({ ...row, id: row.event_id }),
    }));
  }

  /** One statement: the delivery is done, and the webhook is no longer failing (only written when it was). */
  async markDelivered(deliveryId: string, webhookId: string, statusCode: number): Promise<void> {
    await this.dataSource.query(
      `WITH done AS (
         UPDATE webhook_deliveries SET status = 'delivered', last_status_code = $2, claimed_until = NULL, finished_at = now() WHERE id = $1 RETURNING 1)
       UPDATE webhooks SET failing_since = NULL WHERE id = $3 AND failing_since IS NOT NULL AND EXISTS (SELECT 1 FROM done)`,
      [deliveryId, statusCode, webhookId],
    );
  }

  /**
   * A failed attempt: retried at `retryAt`, or finally failed when null. Returns when the webhook
   * started failing (kept across attempts until a success).
   */
  async markAttemptFailed(deliveryId: string, webhookId: string, statusCode: number | null, error: string, retryAt: Date | null): Promise<Date> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(
        `UPDATE webhook_deliveries SET status = $2, last_status_code = $3, last_error = $4, claimed_until = NULL,
           next_attempt_at = COALESCE($5, next_attempt_at), finished_at = CASE WHEN $5::timestamptz IS NULL THEN now() END
         WHERE id = $1`,
        [deliveryId, retryAt ? 'pending' : 'failed', statusCode, error.slice(0, 1000), retryAt],
      );
      const rows: Raw[] = await manager.query(
        `WITH w AS (UPDATE webhooks SET failing_since = COALESCE(failing_since, now()) WHERE id = $1 RETURNING failing_since) SELECT * FROM w`,
        [webhookId],
      );
      return (rows[0]?.failing_since as Date) ?? new Date();
    });
  }

  /** Stops a webhook (410 Gone, or failing too long) and gives up its pending deliveries. */
  async disableWebhook(webhookId: string, reason: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`UPDATE webhooks SET enabled = false, disabled_reason = $2, updated = now() WHERE id = $1`, [webhookId, reason]);
      await manager.query(`UPDATE webhook_deliveries SET status = 'discarded', claimed_until = NULL, finished_at = now() WHERE webhook_id = $1 AND status = 'pending'`, [webhookId]);
    });
  }

  /** Lets go of a claim without counting the attempt (relay shutting down, receiver at its limit). */
  async release(deliveryId: string): Promise<void> {
    await this.dataSource.query(`UPDATE webhook_deliveries SET claimed_until = NULL, attempts = GREATEST(attempts - 1, 0) WHERE id = $1 AND status = 'pending'`, [deliveryId]);
  }

  async logError(record: DeliveryErrorRecord): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO webhook_errors (webhook_id, instance_id, global, url, event, message_type, status_code, attempts, error, payload)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [record.webhookId, record.instanceId, record.global, record.url, record.event, record.messageType, record.statusCode, record.attempts, record.error.slice(0, 1000), JSON.stringify(record.payload)],
    );
  }

  /** The newest delivery errors of an instance's webhooks, or of the global webhook. */
  async recentErrors(scope: { instanceId: string } | { global: true }, limit = 20): Promise<Array<DeliveryErrorRecord & { created: Date }>> {
    const rows: Raw[] =
      'global' in scope
        ? await this.dataSource.query(`SELECT * FROM webhook_errors WHERE global ORDER BY id DESC LIMIT $1`, [limit])
        : await this.dataSource.query(`SELECT * FROM webhook_errors WHERE NOT global AND instance_id = $1 ORDER BY id DESC LIMIT $2`, [scope.instanceId, limit]);
    return rows.map((row) => ({
      webhookId: row.webhook_id as string,
      instanceId: (row.instance_id as string | null) ?? null,
      global: row.global as boolean,
      url: row.url as string,
      event: row.event as string,
      messageType: row.message_type as string,
      statusCode: (row.status_code as number | null) ?? null,
      attempts: Number(row.attempts),
      error: row.error as string,
      payload: row.payload as Record<string, unknown>,
      created: row.created as Date,
    }));
  }

  async countByStatus(): Promise<Record<string, number>> {
    const rows: Raw[] = await this.dataSource.query(`SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`);
    return Object.fromEntries(rows.map((row) => [row.status as string, Number(row.n)]));
  }
}

function toEvent(row: Raw): OutboxEvent {
  return {
    id: String(row.id),
    instanceId: row.instance_id as string,
    eventType: row.event_type as string,
    chatId: (row.chat_id as string) ?? '',
    payload: row.payload as Record<string, unknown>,
  };
}
