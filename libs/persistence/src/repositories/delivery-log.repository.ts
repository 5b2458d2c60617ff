import type { EntityManager } from 'typeorm';
import type { OutboxEvent } from './delivery.repository';
import type { SinkKind, WebhookRow } from './webhook.repository';
import { RepositoryBase } from './repository-base';

type Raw = Record<string, unknown>;

/** A delivery's outcome as the log shows it: `pending` not tried yet, `retrying` failed and due again, `failed` given up (or discarded). */
export type DeliveryOutcome = 'delivered' | 'failed' | 'pending' | 'retrying';

export interface DeliveryLogFilter {
  /** Only the targets of this instance (with `includeGlobal`, the global ones too); every target when not given. */
  targetsOf?: { instanceId: string; includeGlobal: boolean };
  /** Only this target (a webhook or a sink). */
  targetId?: string;
  /** Only HTTP webhooks, or only broker sinks. */
  kind?: 'webhook' | 'sink';
  /** Only deliveries of this instance's events. */
  instanceId?: string;
  /** Deliveries created (their event fanned out) at or after / at or before. */
  from?: Date;
  to?: Date;
  eventId?: string;
  eventType?: string;
  outcome?: DeliveryOutcome;
  /** The previous page's last row: rows after it in the log's order (newest events first). */
  after?: { eventId: string; targetId: string };
  limit: number;
}

export interface DeliveryLogRow {
  id: string;
  targetId: string;
  kind: SinkKind;
  eventId: string;
  eventType: string;
  instanceId: string;
  outcome: DeliveryOutcome;
  /** `discarded`: given up with its target (disabled, deleted, 410 Gone). */
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string;
  latencyMs: number | null;
  createdAt: Date;
  firstAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  /** When a pending delivery is due; null once it is done. */
  nextAttemptAt: Date | null;
  finishedAt: Date | null;
  replayedAt: Date | null;
  /** Who queued the replay: `admin` or the instance's id. */
  replayOrigin: string | null;
}

export interface ReplayRequest {
  /** The enabled targets to deliver to (the caller resolved and checked them against its scope). */
  targets: WebhookRow[];
  /** Only this instance's events (always set for an instance token). */
  instanceId?: string;
  eventIds?: string[];
  from?: Date;
  to?: Date;
  eventTypes?: string[];
  /** `admin` or the instance's id: kept on each replayed delivery. */
  origin: string;
  /** More matching events than this: nothing is written (`tooMany`). */
  maxEvents: number;
  /** Whether the target takes the event (its `events` and `excludeMessages` filters). */
  wants: (target: WebhookRow, event: OutboxEvent) => boolean;
}

export interface ReplayResult {
  /** Deliveries made pending again (or made for the first time) by this replay. */
  queued: number;
  /** Matching deliveries that were still pending: they go out anyway, once. */
  pending: number;
  /** Events asked for (by id, or logged in the window) that the outbox no longer holds (past its retention). */
  unavailable: number;
  /** More than `maxEvents` events matched: nothing was written. */
  tooMany: boolean;
}

const OUTCOME_SQL: Record<DeliveryOutcome, string> = {
  delivered: `d.status = 'delivered'`,
  failed: `d.status IN ('failed', 'discarded')`,
  pending: `d.status = 'pending' AND d.attempts = 0`,
  retrying: `d.status = 'pending' AND d.attempts > 0`,
};

/**
 * The delivery log and replay (issue #40), over the relay's own rows (`webhook_deliveries`, see
 * DeliveryRepository): the log costs the relay a few columns written with the results it records
 * anyway, no row and no index of its own.
 */
export class DeliveryLogRepository extends RepositoryBase {
  /**
   * A page of the log, newest events first (ties by target id, descending). One index scan per target
   * in scope, each on `UNIQUE (webhook_id, event_id)` backwards from the page's start and stopping at
   * `limit` rows; the pages are merged. The other filters are checked on the rows the scans pass.
   */
  async find(filter: DeliveryLogFilter): Promise<DeliveryLogRow[]> {
    const values: unknown[] = [];
    const param = (value: unknown) => {
      values.push(value);
      return `$${values.length}`;
    };
    const targets: string[] = [];
    if (filter.targetsOf) {
      const owner = param(filter.targetsOf.instanceId);
      targets.push(filter.targetsOf.includeGlobal ? `(w.instance_id = ${owner} OR w.instance_id IS NULL)` : `w.instance_id = ${owner}`);
    }
    if (filter.targetId !== undefined) targets.push(`w.id = ${param(filter.targetId)}`);
    if (filter.kind === 'webhook') targets.push(`w.kind = 'webhook'`);
    if (filter.kind === 'sink') targets.push(`w.kind <> 'webhook'`);
    const rows: string[] = [];
    if (filter.instanceId !== undefined) rows.push(`d.instance_id = ${param(filter.instanceId)}`);
    if (filter.from !== undefined) rows.push(`d.created_at >= ${param(filter.from)}`);
    if (filter.to !== undefined) rows.push(`d.created_at <= ${param(filter.to)}`);
    if (filter.eventId !== undefined) rows.push(`d.event_id = ${param(filter.eventId)}::bigint`);
    if (filter.eventType !== undefined) rows.push(`d.event_type = ${param(filter.eventType)}`);
    if (filter.outcome !== undefined) rows.push(OUTCOME_SQL[filter.outcome]);
    if (filter.after) {
      // After (event, target) in descending order: a target sorting before the cursor's may still show the cursor's event.
      const event = param(filter.after.eventId);
      rows.push(`d.event_id <= CASE WHEN w.id < ${param(filter.after.targetId)} THEN ${event}::bigint ELSE ${event}::bigint - 1 END`);
    }
    const limit = param(filter.limit);
    const raw: Raw[] = await this.db.query(
      `SELECT d.*, w.kind FROM webhooks w CROSS JOIN LATERAL (
         SELECT d.id, d.webhook_id, d.event_id, d.instance_id, d.event_type, d.status, d.attempts, d.last_status_code, d.last_error,
           d.latency_ms, d.created_at, d.first_attempt_at, d.last_attempt_at, d.next_attempt_at, d.finished_at, d.replayed_at, d.replay_origin
         FROM webhook_deliveries d
         WHERE d.webhook_id = w.id ${rows.map((clause) => `AND ${clause}`).join(' ')}
         ORDER BY d.event_id DESC LIMIT ${limit}) d
       ${targets.length ? `WHERE ${targets.join(' AND ')}` : ''}
       ORDER BY d.event_id DESC, d.webhook_id DESC LIMIT ${limit}`,
      values,
    );
    return raw.map(toLogRow);
  }

  /**
   * Queues the matching events again for the targets, in one transaction:
   *
   * 1. The events, from the outbox, locked `FOR KEY SHARE` so the retention purge cannot remove one
   *    between this read and the commit (an event without its row would leave a pending delivery the
   *    claim never returns). Events not fanned out yet are left to the fan-out: they go out anyway.
   * 2. One statement upserts a delivery per (target, event) the target takes: a new row, or the row
   *    the log already has made pending again (attempts from zero, due now, the replay marker set).
   *    Rows still pending are left alone (no second copy behind the first). From there the relay's
   *    claims pace them like any delivery: lanes, receivers' in-flight limits, the retry schedule;
   *    and the `webhook-id` is the event's (`evt_<id>`), the one the first delivery carried.
   *
   * A crash before the commit writes nothing. A replayed event is older than its lane's newer
   * deliveries, so it becomes the lane's head and goes out before them (a run of that lane already
   * claimed still finishes first).
   */
  async replay(request: ReplayRequest): Promise<ReplayResult> {
    return this.transaction(async (manager) => {
      const events = await this.replayableEvents(manager, request);
      if (events.length > request.maxEvents) return { queued: 0, pending: 0, unavailable: 0, tooMany: true };
      const columns = { webhook: [] as string[], event: [] as string[], instance: [] as string[], chat: [] as string[], type: [] as string[] };
      for (const event of events) {
        for (const target of request.targets) {
          if (target.instanceId !== null && target.instanceId !== event.instanceId) continue;
          if (!request.wants(target, event)) continue;
          columns.webhook.push(target.id);
          columns.event.push(event.id);
          columns.instance.push(event.instanceId);
          // The fan-out's lanes: per chat for a webhook, one per instance for a broker sink.
          columns.chat.push(target.kind === 'webhook' ? event.chatId : '');
          columns.type.push(event.eventType);
        }
      }
      let queued = 0;
      if (columns.webhook.length > 0) {
        const rows: Raw[] = await manager.query(
          `INSERT INTO webhook_deliveries AS d (webhook_id, event_id, instance_id, chat_id, event_type, replayed_at, replay_origin)
           SELECT w, e, i, c, t, now(), $6 FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[]) AS u(w, e, i, c, t)
           ON CONFLICT (webhook_id, event_id) DO UPDATE SET
             status = 'pending', attempts = 0, next_attempt_at = now(), claimed_until = NULL, last_status_code = NULL, last_error = '',
             latency_ms = NULL, first_attempt_at = NULL, last_attempt_at = NULL, finished_at = NULL,
             replayed_at = now(), replay_origin = EXCLUDED.replay_origin
           WHERE d.status <> 'pending'
           RETURNING d.id`,
          [columns.webhook, columns.event, columns.instance, columns.chat, columns.type, request.origin],
        );
        queued = rows.length;
      }
      const unavailable = await this.unavailable(manager, request);
      return { queued, pending: columns.webhook.length - queued, unavailable, tooMany: false };
    });
  }

  /** The dispatched outbox events a replay asks for, in id order, at most `maxEvents + 1`, locked against the purge. */
  private async replayableEvents(manager: EntityManager, request: ReplayRequest): Promise<OutboxEvent[]> {
    const values: unknown[] = [];
    const param = (value: unknown) => {
      values.push(value);
      return `$${values.length}`;
    };
    const where = ['dispatched_at IS NOT NULL'];
    if (request.instanceId !== undefined) where.push(`instance_id = ${param(request.instanceId)}`);
    // Targets of one instance only take that instance's events: read no others.
    else if (request.targets.every((target) => target.instanceId !== null))
      where.push(`instance_id = ANY(${param(request.targets.map((target) => target.instanceId))}::text[])`);
    if (request.eventIds !== undefined) where.push(`id = ANY(${param(request.eventIds)}::bigint[])`);
    if (request.from !== undefined) where.push(`created_at >= ${param(request.from)}`);
    if (request.to !== undefined) where.push(`created_at <= ${param(request.to)}`);
    if (request.eventTypes !== undefined) where.push(`event_type = ANY(${param(request.eventTypes)}::text[])`);
    const raw: Raw[] = await manager.query(
      `SELECT id, instance_id, event_type, chat_id, payload FROM outbox_events WHERE ${where.join(' AND ')}
       ORDER BY id LIMIT ${param(request.maxEvents + 1)} FOR KEY SHARE`,
      values,
    );
    return raw.map((row) => ({
      id: String(row.id),
      instanceId: row.instance_id as string,
      eventType: row.event_type as string,
      chatId: (row.chat_id as string) ?? '',
      payload: row.payload as Record<string, unknown>,
    }));
  }

  /**
   * How many of the events asked for cannot be replayed because the outbox no longer holds them: ids
   * not found (in the caller's scope: another instance's id counts as not found, nothing more), or, for
   * a window, deliveries the log still has whose event is gone. Events whose log rows are gone too are
   * not known to have existed.
   */
  private async unavailable(manager: EntityManager, request: ReplayRequest): Promise<number> {
    if (request.eventIds !== undefined) {
      const [{ n }]: Array<{ n: string }> = await manager.query(
        `SELECT count(*) AS n FROM unnest($1::bigint[]) AS u(id)
         WHERE NOT EXISTS (SELECT 1 FROM outbox_events o WHERE o.id = u.id AND ($2::text IS NULL OR o.instance_id = $2))`,
        [request.eventIds, request.instanceId ?? null],
      );
      return Number(n);
    }
    if (request.targets.length === 0) return 0;
    const [{ n }]: Array<{ n: string }> = await manager.query(
      `SELECT count(DISTINCT d.event_id) AS n FROM webhook_deliveries d
       WHERE d.webhook_id = ANY($1::text[]) AND d.created_at >= $2 AND d.created_at <= $3
         AND ($4::text IS NULL OR d.instance_id = $4) AND ($5::text[] IS NULL OR d.event_type = ANY($5::text[]))
         AND NOT EXISTS (SELECT 1 FROM outbox_events o WHERE o.id = d.event_id)`,
      [
        request.targets.map((target) => target.id),
        request.from ?? new Date(0),
        request.to ?? new Date(),
        request.instanceId ?? null,
        request.eventTypes ?? null,
      ],
    );
    return Number(n);
  }
}

function toLogRow(row: Raw): DeliveryLogRow {
  const status = row.status as string;
  const attempts = Number(row.attempts);
  const outcome: DeliveryOutcome = status === 'delivered' ? 'delivered' : status === 'pending' ? (attempts > 0 ? 'retrying' : 'pending') : 'failed';
  return {
    id: String(row.id),
    targetId: row.webhook_id as string,
    kind: ((row.kind as SinkKind | undefined) ?? 'webhook') as SinkKind,
    eventId: String(row.event_id),
    eventType: row.event_type as string,
    instanceId: row.instance_id as string,
    outcome,
    status,
    attempts,
    lastStatusCode: (row.last_status_code as number | null) ?? null,
    lastError: (row.last_error as string) ?? '',
    latencyMs: row.latency_ms === null || row.latency_ms === undefined ? null : Number(row.latency_ms),
    createdAt: row.created_at as Date,
    firstAttemptAt: (row.first_attempt_at as Date | null) ?? null,
    lastAttemptAt: (row.last_attempt_at as Date | null) ?? null,
    nextAttemptAt: status === 'pending' ? (row.next_attempt_at as Date) : null,
    finishedAt: (row.finished_at as Date | null) ?? null,
    replayedAt: (row.replayed_at as Date | null) ?? null,
    replayOrigin: (row.replay_origin as string | null) ?? null,
  };
}
