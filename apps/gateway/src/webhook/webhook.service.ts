import { Inject, Injectable } from '@nestjs/common';
import { type DeliveryErrorRecord, DeliveryRepository, WebhookRepository, type WebhookRow, type WebhookValues } from '@gw/persistence';
import { recordId, SsrfError, SsrfGuard } from '@gw/platform';
import { generateWebhookSecret } from '@gw/relay';
import { ApiError } from '../common/api-error';
import type { GatewayConfig } from '../runtime/gateway-config';
import { GATEWAY_CONFIG } from '../runtime/tokens';
import type { GlobalWebhookDto, WebhookDto } from './dto/webhook.dto';
import type { WebhookResponse } from './dto/webhook.response';
import type { WebhookErrorResponse } from '../common/dto/webhook-error.response';

/** The API's Webhook record; the secret appears only in the answer that created or replaced it. */
/** Whose error log: an instance's webhooks (or sinks), or the global one. */
export type ErrorScope = { instanceId: string } | { global: true };

/** One failed attempt as `/webhook/errors`, `/globalwebhook/errors` and the sinks' `…/errors` answer it. */
export function toWebhookError(row: DeliveryErrorRecord & { created: Date }, scope: ErrorScope): WebhookErrorResponse {
  return {
    created: row.created.toISOString(),
    url: row.url,
    type: 'global' in scope ? 'global' : 'local',
    event: row.event,
    message_type: row.messageType,
    status_code: row.statusCode ?? 0,
    attempts: row.attempts,
    error: row.error,
    payload: row.payload,
  };
}

export function toWebhookRecord(row: WebhookRow, showSecret = false): WebhookResponse {
  return {
    id: row.id,
    enabled: row.enabled,
    url: row.url,
    events: row.events,
    excludeMessages: row.excludeMessages,
    addUrlEvents: row.addUrlEvents,
    addUrlTypesMessages: row.addUrlTypesMessages,
    includeToken: row.includeToken,
    ...(showSecret ? { secret: row.secret } : {}),
    ...(row.disabledReason ? { disabledReason: row.disabledReason } : {}),
    ...(row.instanceId ? { instance_id: row.instanceId } : {}),
    created: row.created.toISOString(),
    updated: row.updated.toISOString(),
  };
}

@Injectable()
export class WebhookService {
  private readonly ssrf: SsrfGuard;

  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly deliveries: DeliveryRepository,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.ssrf = new SsrfGuard(config.ssrfAllowlist);
  }

  async list(instanceId: string | null): Promise<WebhookResponse[]> {
    return (await this.webhooks.listFor(instanceId)).map((row) => toWebhookRecord(row));
  }

  /**
   * POST /webhook. Simple mode (no action, no id): the instance's one webhook is created or updated.
   * Advanced mode: `add` creates another, `update` and `delete` need `id`. Answers the list afterwards.
   */
  async configure(instanceId: string | null, dto: WebhookDto): Promise<WebhookResponse[]> {
    const shown = new Set<string>();
    const action = dto.action ?? (dto.id ? 'update' : 'simple');
    if (action === 'delete') {
      if (!dto.id) throw ApiError.badRequest('id is required to delete a webhook');
      if (!(await this.webhooks.delete(instanceId, dto.id))) throw ApiError.notFound('Webhook not found');
    } else if (action === 'add') {
      const created = await this.webhooks.insert(recordId(14), instanceId, await this.values(dto), dto.secret ?? generateWebhookSecret());
      shown.add(created.id);
    } else {
      const target = dto.id ? await this.webhooks.find(instanceId, dto.id) : (await this.webhooks.listFor(instanceId))[0];
      if (dto.id && !target) throw ApiError.notFound('Webhook not found');
      if (target) {
        const updated = await this.webhooks.update(instanceId, target.id, await this.values(dto, target), dto.secret);
        if (dto.secret && updated) shown.add(updated.id);
      } else {
        const created = await this.webhooks.insert(recordId(14), instanceId, await this.values(dto), dto.secret ?? generateWebhookSecret());
        shown.add(created.id);
      }
    }
    return (await this.webhooks.listFor(instanceId)).map((row) => toWebhookRecord(row, shown.has(row.id)));
  }

  /** The global webhook as a list: empty when none is set (where `globalWebhook` answers 404). */
  async globalWebhooks(): Promise<WebhookResponse[]> {
    return (await this.webhooks.listFor(null)).slice(0, 1).map((row) => toWebhookRecord(row));
  }

  async globalWebhook(): Promise<WebhookResponse> {
    const [row] = await this.webhooks.listFor(null);
    if (!row) throw ApiError.notFound('Global webhook not found');
    return toWebhookRecord(row);
  }

  async configureGlobal(dto: GlobalWebhookDto): Promise<WebhookResponse> {
    const list = await this.configure(null, { ...dto, action: undefined, id: undefined });
    return list[0];
  }

  async errors(scope: ErrorScope): Promise<WebhookErrorResponse[]> {
    return (await this.deliveries.recentErrors(scope)).map((row) => toWebhookError(row, scope));
  }

  /** Merges the body over the current values; the URL passes the SSRF guard now and at every delivery. */
  private async values(dto: WebhookDto, current?: WebhookRow): Promise<WebhookValues> {
    const url = dto.url ?? current?.url;
    if (!url) throw ApiError.badRequest('url is required');
    try {
      await this.ssrf.check(url);
    } catch (error) {
      if (error instanceof SsrfError) throw ApiError.badRequest(`url refused: ${error.message}`);
      throw error;
    }
    return {
      url,
      enabled: dto.enabled ?? current?.enabled ?? true,
      events: dto.events ?? current?.events ?? [],
      excludeMessages: dto.excludeMessages ?? current?.excludeMessages ?? [],
      addUrlEvents: dto.addUrlEvents ?? current?.addUrlEvents ?? false,
      addUrlTypesMessages: dto.addUrlTypesMessages ?? current?.addUrlTypesMessages ?? false,
      includeToken: dto.includeToken ?? current?.includeToken ?? false,
    };
  }
}
