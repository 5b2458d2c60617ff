import { Bus, type BusSubscription } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import { DeliveryRepository, type DeliveryClaim, WebhookRepository, type WebhookRow } from '@gw/persistence';
import { guardedLookup, type Logger, SsrfError, SsrfGuard } from '@gw/platform';
import type { DataSource } from 'typeorm';
import { Agent, request } from 'undici';
import { nextAttemptDelay, parseRetryAfter } from './retry-schedule';
import { signWebhook } from './signature';
import { deliveryUrl, matchWebhooks } from './webhook-filter';

export interface WebhookRelayConfig {
  /** `BaseUrl` of every envelope: where this gateway is reached. */
  publicBaseUrl: string;
  /** WEBHOOK_INCLUDE_TOKEN: put the instance token in every payload (receivers migrating from uazapi). */
  includeToken: boolean;
  retryScheduleMs: number[];
  requestTimeoutMs: number;
  /** Requests in flight per receiver (URL origin), so one slow receiver cannot starve the others. */
  maxInFlightPerReceiver: number;
  /** A webhook failing for this long is disabled. */
  disableAfterMs: number;
  batchSize: number;
  pollIntervalMs: number;
  /** How long a claimed delivery is ours before another relay may take it over. */
  claimMs: number;
  ssrf: SsrfGuard;
}

export const WEBHOOK_RELAY_DEFAULTS = {
  requestTimeoutMs: 10_000,
  maxInFlightPerReceiver: 8,
  disableAfterMs: 5 * 24 * 3_600_000,
  batchSize: 200,
  pollIntervalMs: 1_000,
  claimMs: 30_000,
} as const;

/**
 * Delivers outbox events to webhooks, at least once and in order per (webhook, instance, chat). All
 * state is in Postgres (see DeliveryRepository); this loop only fans out, claims, sends and records.
 */
export class WebhookRelay {
  private readonly deliveries: DeliveryRepository;
  private readonly webhooks: WebhookRepository;
  private readonly agent: Agent;
  private readonly inFlight = new Map<string, number>();
  private readonly tokens = new Map<string, { token: string; at: number }>();
  /** Webhook rows for a second: every delivery needs its webhook, most deliveries share a few. */
  private readonly webhookCache = new Map<string, { row: WebhookRow | null; at: number }>();
  private subscription?: BusSubscription;
  private running = false;
  private wake?: () => void;
  private loopDone?: Promise<void>;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: Bus,
    private readonly config: WebhookRelayConfig,
    private readonly logger: Logger,
  ) {
    this.deliveries = new DeliveryRepository(dataSource);
    this.webhooks = new WebhookRepository(dataSource);
    this.agent = new Agent({ connect: { lookup: guardedLookup(config.ssrf), timeout: config.requestTimeoutMs }, keepAliveTimeout: 10_000 });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.subscription = this.bus.subscribe(Subjects.outboxWildcard, () => this.wake?.());
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.subscription?.unsubscribe();
    this.wake?.();
    await this.loopDone;
    await Promise.allSettled([...this.pending]);
    await this.agent.close().catch(() => undefined);
  }

  /** One pass: fan out what is new, then send what is due. Returns how much work it found. */
  async runOnce(): Promise<number> {
    let work = 0;
    for (;;) {
      const { events } = await this.deliveries.fanOut(this.config.batchSize, matchWebhooks);
      work += events;
      if (events < this.config.batchSize) break;
    }
    const saturated = await this.saturatedWebhooks();
    const claims = await this.deliveries.claimDue(this.config.batchSize, this.config.claimMs, saturated, this.config.maxInFlightPerReceiver);
    work += claims.length;
    for (const claim of claims) this.track(this.deliver(claim));
    return work;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let work = 0;
      try {
        work = await this.runOnce();
      } catch (error) {
        this.logger.error({ err: error }, 'webhook relay pass failed');
      }
      if (!this.running) break;
      if (work === 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.config.pollIntervalMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }

  private track(promise: Promise<void>): void {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise));
  }

  private async saturatedWebhooks(): Promise<string[]> {
    const full = [...this.inFlight.entries()].filter(([, count]) => count >= this.config.maxInFlightPerReceiver).map(([origin]) => origin);
    if (full.length === 0) return [];
    const rows: Array<{ id: string; url: string }> = await this.dataSource.query(`SELECT id, url FROM webhooks WHERE enabled`);
    return rows.filter((row) => full.includes(originOf(row.url))).map((row) => row.id);
  }

  private async webhookOf(id: string): Promise<WebhookRow | null> {
    const cached = this.webhookCache.get(id);
    if (cached && Date.now() - cached.at < 1_000) return cached.row;
    const row = await this.webhooks.byId(id);
    this.webhookCache.set(id, { row, at: Date.now() });
    return row;
  }

  private async deliver(claim: DeliveryClaim): Promise<void> {
    const webhook = await this.webhookOf(claim.webhookId);
    if (!webhook || !webhook.enabled) {
      await this.deliveries.disableWebhook(claim.webhookId, webhook ? webhook.disabledReason || 'disabled' : 'deleted').catch(() => undefined);
      return;
    }
    const origin = originOf(webhook.url);
    if ((this.inFlight.get(origin) ?? 0) >= this.config.maxInFlightPerReceiver) {
      await this.deliveries.release(claim.deliveryId);
      return;
    }
    this.inFlight.set(origin, (this.inFlight.get(origin) ?? 0) + 1);
    try {
      await this.send(claim, webhook);
    } catch (error) {
      this.logger.error({ err: error, deliveryId: claim.deliveryId }, 'webhook delivery bookkeeping failed');
    } finally {
      const left = (this.inFlight.get(origin) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(origin);
      else this.inFlight.set(origin, left);
      this.wake?.();
    }
  }

  private async send(claim: DeliveryClaim, webhook: WebhookRow): Promise<void> {
    const { event } = claim;
    const envelope: Record<string, unknown> = { BaseUrl: this.config.publicBaseUrl, ...event.payload };
    if (this.config.includeToken || webhook.includeToken) envelope.token = await this.tokenOf(event.instanceId);
    const body = JSON.stringify(envelope);
    const url = deliveryUrl(webhook, event.eventType, event.payload);
    const headers = signWebhook(webhook.secret, `evt_${event.id}`, Math.floor(Date.now() / 1000), body);
    let statusCode: number | null = null;
    let error = '';
    let retryAfterMs: number | null = null;
    try {
      // Literal IPs never reach the connect-time lookup, so the URL is checked here as well.
      await this.config.ssrf.check(url);
      const response = await request(url, {
        method: 'POST',
        body,
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'wa-gateway-webhooks/1' },
        dispatcher: this.agent,
        headersTimeout: this.config.requestTimeoutMs,
        bodyTimeout: this.config.requestTimeoutMs,
        signal: AbortSignal.timeout(this.config.requestTimeoutMs),
      });
      statusCode = response.statusCode;
      // Drain (bounded) so the connection can be reused; the content itself does not matter.
      await response.body.text().catch(() => '');
      if (statusCode >= 200 && statusCode < 300) {
        await this.deliveries.markDelivered(claim.deliveryId, webhook.id, statusCode);
        return;
      }
      retryAfterMs = parseRetryAfter(headerValue(response.headers['retry-after']));
      error = `receiver answered ${statusCode}`;
    } catch (caught) {
      error = describeError(caught);
    }

    await this.deliveries.logError({
      webhookId: webhook.id,
      instanceId: event.instanceId,
      global: webhook.instanceId === null,
      url,
      event: event.eventType,
      messageType: messageTypeOf(event.payload),
      statusCode,
      attempts: claim.attempt,
      error,
      payload: { ...envelope, ...(envelope.token ? { token: '[masked]' } : {}) },
    });
    if (statusCode === 410) {
      await this.deliveries.disableWebhook(webhook.id, '410 Gone from the receiver');
      this.webhookCache.delete(webhook.id);
      this.logger.warn({ webhookId: webhook.id, url: webhook.url }, 'webhook disabled: receiver answered 410');
      return;
    }
    const delay = nextAttemptDelay(this.config.retryScheduleMs, claim.attempt, retryAfterMs);
    const failingSince = await this.deliveries.markAttemptFailed(claim.deliveryId, webhook.id, statusCode, error, delay === null ? null : new Date(Date.now() + delay));
    if (Date.now() - failingSince.getTime() >= this.config.disableAfterMs) {
      await this.deliveries.disableWebhook(webhook.id, `failing since ${failingSince.toISOString()}`);
      this.logger.warn({ webhookId: webhook.id, url: webhook.url, failingSince }, 'webhook disabled: failing for too long');
    }
  }

  private async tokenOf(instanceId: string): Promise<string> {
    const cached = this.tokens.get(instanceId);
    if (cached && Date.now() - cached.at < 60_000) return cached.token;
    const rows: Array<{ token: string }> = await this.dataSource.query(`SELECT token FROM instances WHERE id = $1`, [instanceId]);
    const token = rows[0]?.token ?? '';
    this.tokens.set(instanceId, { token, at: Date.now() });
    return token;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function messageTypeOf(payload: Record<string, unknown>): string {
  const message = payload.message as { messageType?: unknown } | undefined;
  return typeof message?.messageType === 'string' ? message.messageType : '';
}

function describeError(error: unknown): string {
  if (error instanceof SsrfError) return `refused by the SSRF guard: ${error.message}`;
  const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError' || err?.code === 'UND_ERR_HEADERS_TIMEOUT' || err?.code === 'UND_ERR_CONNECT_TIMEOUT') return 'timed out';
  if (err?.cause?.code === 'ESSRF' || err?.code === 'ESSRF') return `refused by the SSRF guard: ${err.cause?.message ?? err.message}`;
  return err?.code ? `${err.code}: ${err.message ?? ''}`.trim() : (err?.message ?? 'request failed');
}
