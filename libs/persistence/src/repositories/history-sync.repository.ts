import { RepositoryBase } from './repository-base';

/** What the `history` events of one sync (one request id) brought, as the outbox still holds them. */
export interface HistorySyncSummary {
  batches: number;
  chats: number;
  contacts: number;
  messages: number;
  /** The newest batch's progress (0-100), null when WhatsApp gave none. */
  progress: number | null;
  /** Some batch said it was the last. */
  isLatest: boolean;
  firstAt: Date | null;
  lastAt: Date | null;
}

/** The history syncs of an instance, read from its `history` events (`GET /instance/history-sync/status`). */
export class HistorySyncRepository extends RepositoryBase {
  /**
   * Sums the `history` events carrying `requestId` (the pairing's, or an on-demand sync's). The
   * outbox keeps events for its retention period, so a sync older than that reads as none.
   */
  async summary(instanceId: string, requestId: string): Promise<HistorySyncSummary> {
    const rows: Array<Record<string, unknown>> = await this.db.query(
      `SELECT count(*)::int AS batches,
              coalesce(sum((payload->'counts'->>'chats')::int), 0)::int AS chats,
              coalesce(sum((payload->'counts'->>'contacts')::int), 0)::int AS contacts,
              coalesce(sum((payload->'counts'->>'messages')::int), 0)::int AS messages,
              (array_agg(payload->>'progress' ORDER BY id DESC))[1] AS progress,
              coalesce(bool_or((payload->>'isLatest')::boolean), false) AS is_latest,
              min(created_at) AS first_at, max(created_at) AS last_at
         FROM outbox_events
        WHERE instance_id = $1 AND event_type = 'history' AND payload->>'request_id' = $2`,
      [instanceId, requestId],
    );
    const row = rows[0] ?? {};
    const progress = row.progress === null || row.progress === undefined ? null : Number(row.progress);
    return {
      batches: Number(row.batches ?? 0),
      chats: Number(row.chats ?? 0),
      contacts: Number(row.contacts ?? 0),
      messages: Number(row.messages ?? 0),
      progress: progress !== null && Number.isFinite(progress) ? progress : null,
      isLatest: row.is_latest === true,
      firstAt: row.first_at ? new Date(row.first_at as string) : null,
      lastAt: row.last_at ? new Date(row.last_at as string) : null,
    };
  }
}
