import { Injectable } from '@nestjs/common';
import { DeliveryLogRepository, type DeliveryLogFilter, type DeliveryLogRow, InstanceRepository, WebhookRepository, type WebhookRow } from '@gw/persistence';
import { redactUrl } from '@gw/platform';
import { maskUrlCredentials } from '@gw/persistence';
import { webhookWants } from '@gw/relay';
import { ApiError } from '../common/api-error';
import {
  type AdminDeliveryLogQueryDto,
  type AdminReplayDto,
  DELIVERY_PAGE_DEFAULT,
  type DeliveryLogQueryDto,
  REPLAY_MAX_EVENTS,
  REPLAY_MAX_WINDOW_DAYS,
  type ReplayDto,
} from './dto/delivery-log.dto';
import type { DeliveryPageResponse, DeliveryReplayResponse, DeliveryResponse } from './dto/delivery.response';

/** Whose deliveries: an instance token's own targets, or (the admin) any. */
type Scope = { instanceId: string } | { admin: true; instanceId?: string };

/**
 * The delivery log and replay (issue #40): reads the relay's delivery rows within the caller's scope,
 * and queues events again from the outbox (DeliveryLogRepository) for the relay to deliver as it
 * delivers anything, with the event's own `webhook-id`.
 */
@Injectable()
export class DeliveryLogService {
  constructor(
    private readonly log: DeliveryLogRepository,
    private readonly webhooks: WebhookRepository,
    private readonly instances: InstanceRepository,
  ) {}

  /** `GET /webhook/deliveries` (`kind` undefined: webhooks and sinks) and `GET /sink/deliveries` (`sink`). */
  async forInstance(instanceId: string, filter: DeliveryLogQueryDto, kind?: 'sink'): Promise<DeliveryPageResponse> {
    return this.page(filter, { instanceId }, kind);
  }

  /** `GET /admin/deliveries`: every instance's targets and the global ones, or one instance's deliveries. */
  async forAdmin(filter: AdminDeliveryLogQueryDto): Promise<DeliveryPageResponse> {
    return this.page(filter, { admin: true, instanceId: filter.instance });
  }

  /** `POST /webhook/replay`: the instance's own events, to its own targets. */
  async replayForInstance(instanceId: string, dto: ReplayDto): Promise<DeliveryReplayResponse> {
    return this.replay(dto, { instanceId });
  }

  /** `POST /admin/webhook/replay`: any instance's events (or one's, `instance`), to any target. */
  async replayForAdmin(dto: AdminReplayDto): Promise<DeliveryReplayResponse> {
    if (dto.instance !== undefined && (await this.instances.findToken(dto.instance)) === null) throw ApiError.notFound('Instance not found');
    if (dto.instance === undefined && dto.webhookId === undefined && dto.sinkId === undefined) {
      throw ApiError.badRequest('name a webhookId, a sinkId or an instance');
    }
    return this.replay(dto, { admin: true, instanceId: dto.instance });
  }

  private async page(filter: DeliveryLogQueryDto, scope: Scope, kind?: 'sink'): Promise<DeliveryPageResponse> {
    if (filter.from && filter.to && filter.from > filter.to) throw ApiError.badRequest('from must not be after to');
    if (filter.webhookId !== undefined && filter.sinkId !== undefined) throw ApiError.badRequest('give webhookId or sinkId, not both');
    if (kind === 'sink' && filter.webhookId !== undefined) throw ApiError.badRequest('webhookId is not a filter of the sinks’ log: use sinkId');
    const targetId = filter.webhookId ?? filter.sinkId;
    // A target outside the scope is not found, as a missing one (an instance learns nothing of another's ids).
    if (targetId !== undefined) await this.target(scope, filter.webhookId, filter.sinkId, { enabledOnly: false });
    const limit = filter.limit ?? DELIVERY_PAGE_DEFAULT;
    const [cursorEvent, cursorTarget] = filter.cursor ? splitCursor(filter.cursor) : [];
    const query: DeliveryLogFilter = {
      targetsOf:
        'admin' in scope
          ? scope.instanceId
            ? { instanceId: scope.instanceId, includeGlobal: true }
            : undefined
          : { instanceId: scope.instanceId, includeGlobal: false },
      instanceId: scope.instanceId,
      targetId,
      kind: kind ?? (filter.webhookId !== undefined ? 'webhook' : filter.sinkId !== undefined ? 'sink' : undefined),
      from: filter.from,
      to: filter.to,
      eventId: filter.eventId,
      eventType: filter.eventType,
      outcome: filter.outcome,
      after: cursorEvent && cursorTarget ? { eventId: cursorEvent, targetId: cursorTarget } : undefined,
      limit,
    };
    const rows = await this.log.find(query);
    const last = rows[rows.length - 1];
    return { deliveries: rows.map(toView), limit, next_cursor: rows.length === limit && last ? `${last.eventId}:${last.targetId}` : null };
  }

  private async replay(dto: ReplayDto, scope: Scope): Promise<DeliveryReplayResponse> {
    if (dto.webhookId !== undefined && dto.sinkId !== undefined) throw ApiError.badRequest('give webhookId or sinkId, not both');
    if (dto.from && dto.to && dto.from > dto.to) throw ApiError.badRequest('from must not be after to');
    if (dto.eventIds === undefined) {
      if (!dto.from || !dto.to) throw ApiError.badRequest('give eventIds, or a window with both from and to');
      if (dto.to.getTime() - dto.from.getTime() > REPLAY_MAX_WINDOW_DAYS * 86_400_000) {
        throw ApiError.badRequest(`the window must be at most ${REPLAY_MAX_WINDOW_DAYS} days: replay a longer period in several calls`);
      }
    }
    let targets: WebhookRow[];
    if (dto.webhookId !== undefined || dto.sinkId !== undefined) {
      const target = await this.target(scope, dto.webhookId, dto.sinkId, { enabledOnly: true });
      if (scope.instanceId && target.instanceId !== null && target.instanceId !== scope.instanceId) {
        throw ApiError.notFound(dto.webhookId !== undefined ? 'Webhook not found' : 'Sink not found');
      }
      targets = [target];
    } else {
      // Every enabled target of the instance: its webhooks and its sinks of each kind.
      targets = (await this.webhooks.ownedBy(scope.instanceId as string)).filter((row) => row.enabled);
    }
    const result = await this.log.replay({
      targets,
      instanceId: scope.instanceId,
      eventIds: dto.eventIds,
      from: dto.from,
      to: dto.to,
      eventTypes: dto.eventTypes,
      origin: 'admin' in scope ? 'admin' : scope.instanceId,
      maxEvents: REPLAY_MAX_EVENTS,
      wants: (target, event) => webhookWants(target, event.eventType, event.payload),
    });
    if (result.tooMany) throw ApiError.badRequest(`more than ${REPLAY_MAX_EVENTS} events match: narrow the window or the event types`);
    return { queued: result.queued, pending: result.pending, unavailable: result.unavailable };
  }

  /**
   * The webhook (or sink) the request names, within the scope: an instance's own, or for the admin any
   * (global ones too). 404 when it is none of those; 409 for a replay to a disabled one (the relay would
   * discard its deliveries at once).
   */
  private async target(scope: Scope, webhookId: string | undefined, sinkId: string | undefined, options: { enabledOnly: boolean }): Promise<WebhookRow> {
    const id = (webhookId ?? sinkId) as string;
    const row = await this.webhooks.byId(id);
    const inScope = row !== null && ('admin' in scope || row.instanceId === scope.instanceId);
    const kindMatches = row !== null && (webhookId !== undefined ? row.kind === 'webhook' : row.kind !== 'webhook');
    if (!row || !inScope || !kindMatches) throw ApiError.notFound(webhookId !== undefined ? 'Webhook not found' : 'Sink not found');
    if (options.enabledOnly && !row.enabled)
      throw ApiError.conflict(`${webhookId !== undefined ? 'Webhook' : 'Sink'} is disabled: enable it before replaying to it`);
    return row;
  }
}

function splitCursor(cursor: string): [string, string] {
  const at = cursor.indexOf(':');
  return [cursor.slice(0, at), cursor.slice(at + 1)];
}

/** Any URL in an error text keeps its host and path; user info and credential parameters are masked. */
export function maskDeliveryError(text: string): string {
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi, (url) => redactUrl(maskUrlCredentials(url)) as string);
}

function toView(row: DeliveryLogRow): DeliveryResponse {
  const iso = (date: Date | null) => (date ? date.toISOString() : null);
  const isWebhook = row.kind === 'webhook';
  return {
    id: row.id,
    kind: row.kind,
    webhook_id: isWebhook ? row.targetId : null,
    sink_id: isWebhook ? null : row.targetId,
    event_id: row.eventId,
    event_type: row.eventType,
    instance_id: row.instanceId,
    outcome: row.outcome,
    attempts: row.attempts,
    last_status_code: row.lastStatusCode,
    latency_ms: row.latencyMs,
    error: maskDeliveryError(row.lastError || (row.status === 'discarded' ? 'discarded: its target was disabled or removed' : '')),
    created_at: row.createdAt.toISOString(),
    first_attempt_at: iso(row.firstAttemptAt),
    last_attempt_at: iso(row.lastAttemptAt),
    next_attempt_at: iso(row.nextAttemptAt),
    finished_at: iso(row.finishedAt),
    replayed: row.replayedAt !== null,
    replayed_at: iso(row.replayedAt),
    replayed_by: row.replayOrigin,
  };
}
