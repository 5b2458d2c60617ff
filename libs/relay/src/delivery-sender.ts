import type { Bus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import type { DeliveryClaim, DeliveryRepository, InstanceRepository, OutboxEvent, WebhookRow } from '@gw/persistence';
import { contextOfTraceparent, failSpan, inSpan, type Logger, metrics, SpanKind, type SpanOptions } from '@gw/platform';
import type { DeliveredResults } from './delivered-results';
import type { WebhookRelayConfig } from './relay-config';
import { nextAttemptDelay } from './retry-schedule';
import type { SinkMessage } from './sinks/transport';
import type { WebhookTargets } from './webhook-targets';

/** Sends one delivery at a time and records what came of it: a success for the next batch, a failure at once. */
export class DeliverySender {
  private readonly tokens = new Map<string, { token: string; at: number }>();

  constructor(
    private readonly deliveries: DeliveryRepository,
    private readonly instances: InstanceRepository,
    private readonly targets: WebhookTargets,
    private readonly results: DeliveredResults,
    private readonly bus: Bus,
    private readonly config: WebhookRelayConfig,
    private readonly logger: Logger,
  ) {}

  /**
   * One attempt of one delivery, through the transport of the target's kind. True once delivered
   * (recorded with the next batch); false once a failure is recorded (its retry time, the error log,
   * disabling a target gone or failing too long: the same for every kind). `endsRun`: the last of its
   * run, whose success lets the flush claim its lane on.
   */
  async send(claim: DeliveryClaim, webhook: WebhookRow, endsRun = true): Promise<boolean> {
    const { event } = claim;
    const token = this.config.includeToken || webhook.includeToken ? await this.tokenOf(event.instanceId) : undefined;
    const message: SinkMessage = { id: `evt_${event.id}`, event, body: envelopeJson(this.config.publicBaseUrl, event, token) };
    const transport = this.targets.transportOf(webhook);
    const started = performance.now();
    // Tracing on: the delivery is a span of the trace the event was written in (its outbox row's traceparent),
    // active while the transport sends, so a webhook request carries it in its own `traceparent` header.
    const outcome = transport
      ? await inSpan('webhook-relay', `deliver ${webhook.kind}`, deliverySpan(claim, webhook), async (span) => {
          const sent = await transport.send(webhook, message);
          if (span && sent.statusCode !== null) span.setAttribute('http.response.status_code', sent.statusCode);
          if (!sent.ok) failSpan(span, new Error(sent.error));
          return sent;
        })
      : { ok: false as const, statusCode: null, error: `no transport for ${webhook.kind} targets in this relay` };
    // HTTP attempts are counted by the transport (by status class); a broker's here, by kind.
    const latencyMs = performance.now() - started;
    if (webhook.kind !== 'webhook') metrics().recordSinkDelivery(webhook.kind, outcome.ok, latencyMs / 1000);
    if (outcome.ok) {
      this.results.record({ deliveryId: claim.deliveryId, statusCode: outcome.statusCode, latencyMs, endsRun }, this.targets.receiverKeyOf(webhook));
      return true;
    }

    await this.deliveries.logError({
      webhookId: webhook.id,
      kind: webhook.kind,
      instanceId: event.instanceId,
      global: webhook.instanceId === null,
      url: transport ? transport.describe(webhook, message) : webhook.kind,
      event: event.eventType,
      messageType: messageTypeOf(event.payload),
      statusCode: outcome.statusCode,
      attempts: claim.attempt,
      error: outcome.error,
      payload: { ...envelopeOf(this.config.publicBaseUrl, event, token), ...(token ? { token: '[masked]' } : {}) },
    });
    if (outcome.gone) {
      await this.disable(webhook, outcome.gone, null);
      this.logger.warn({ webhookId: webhook.id, kind: webhook.kind, reason: outcome.gone }, 'webhook disabled: target gone');
      return false;
    }
    const delay = nextAttemptDelay(this.config.retryScheduleMs, claim.attempt, outcome.retryAfterMs ?? null);
    const failingSince = await this.deliveries.markAttemptFailed(
      claim.deliveryId,
      webhook.id,
      outcome.statusCode,
      outcome.error,
      delay === null ? null : new Date(Date.now() + delay),
      latencyMs,
    );
    if (Date.now() - failingSince.getTime() >= this.config.disableAfterMs) {
      await this.disable(webhook, `failing since ${failingSince.toISOString()}`, failingSince);
      this.logger.warn({ webhookId: webhook.id, kind: webhook.kind, failingSince }, 'webhook disabled: failing for too long');
    }
    return false;
  }

  /** Disables a webhook on the relay's own decision, with a `webhook` `Disabled` event (see DeliveryRepository.disableWebhook). */
  private async disable(webhook: WebhookRow, reason: string, failingSince: Date | null): Promise<void> {
    this.targets.markDisabled(webhook.id);
    const event = await this.deliveries.disableWebhook(webhook.id, reason, { failingSince });
    if (event) this.bus.publish(Subjects.outbox(event.instanceId), { instanceId: event.instanceId, lastId: event.lastId });
    // Every relay (this one too) closes the connections the sink no longer needs.
    if (webhook.kind !== 'webhook') this.bus.publish(Subjects.sinksChanged, {});
  }

  private async tokenOf(instanceId: string): Promise<string> {
    const cached = this.tokens.get(instanceId);
    if (cached && Date.now() - cached.at < 60_000) return cached.token;
    const token = (await this.instances.findToken(instanceId)) ?? '';
    this.tokens.set(instanceId, { token, at: Date.now() });
    return token;
  }
}

/** A delivery's span: continues the event's trace (its outbox row's traceparent; a trace of its own without one). */
function deliverySpan(claim: DeliveryClaim, webhook: WebhookRow): SpanOptions {
  return {
    kind: webhook.kind === 'webhook' ? SpanKind.CLIENT : SpanKind.PRODUCER,
    parent: contextOfTraceparent(claim.event.traceparent),
    attributes: { 'wa.event.id': claim.event.id, 'wa.event.type': claim.event.eventType, 'wa.delivery.attempt': claim.attempt },
  };
}

/** The webhook envelope: `BaseUrl`, the event's payload, and the instance's token when the target asks for it. */
function envelopeOf(baseUrl: string, event: OutboxEvent, token: string | undefined): Record<string, unknown> {
  const envelope: Record<string, unknown> = { BaseUrl: baseUrl, ...event.payload };
  if (token !== undefined) envelope.token = token;
  return envelope;
}

/**
 * The envelope as JSON, the bytes sent. A claimed event's payload comes as JSON text (`payloadJson`): the
 * envelope is that text with `BaseUrl` put first (and the token last), with no parse and no serialising
 * again (issue #38: both, for every delivery). A payload of another shape, or one with a `BaseUrl` or
 * `token` key of its own (anywhere in it, to be safe), takes the long way, whose result means the same.
 */
export function envelopeJson(baseUrl: string, event: OutboxEvent, token: string | undefined): string {
  const text = event.payloadJson;
  if (text === undefined || !text.startsWith('{') || !text.endsWith('}') || text.includes('"BaseUrl"') || (token !== undefined && text.includes('"token"')))
    return JSON.stringify(envelopeOf(baseUrl, event, token));
  const inner = text.slice(1, -1);
  return `{"BaseUrl":${JSON.stringify(baseUrl)}${inner.trim() ? `,${inner}` : ''}${token !== undefined ? `,"token":${JSON.stringify(token)}` : ''}}`;
}

function messageTypeOf(payload: Record<string, unknown>): string {
  const message = payload.message as { messageType?: unknown } | undefined;
  return typeof message?.messageType === 'string' ? message.messageType : '';
}
