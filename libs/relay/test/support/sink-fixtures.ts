import { InProcessBus } from '@gw/bus';
import { DeliveryRepository, InstanceRepository, OutboxRepository, type SinkKind, WebhookRepository, type WebhookRow } from '@gw/persistence';
import { createLogger, SsrfGuard } from '@gw/platform';
import type { TestDatabase } from '@gw/testing';
import { generateWebhookSecret, WEBHOOK_RELAY_DEFAULTS, WebhookRelay, type WebhookRelayConfig } from '@gw/relay';

/** What the sink specs share: a fast relay config (loopback allowed), outbox events, sink rows and relays over one test database. */

/** Retries every 100 ms, polls every 20 ms, the SSRF guard open to loopback (the brokers and their proxies). */
export const sinkRelayConfig = (overrides: Partial<WebhookRelayConfig> = {}): WebhookRelayConfig => ({
  ...WEBHOOK_RELAY_DEFAULTS,
  publicBaseUrl: 'http://gateway.test',
  includeToken: false,
  retryScheduleMs: Array.from({ length: 40 }, () => 100),
  requestTimeoutMs: 2_000,
  pollIntervalMs: 20,
  claimMs: 5_000,
  ssrf: SsrfGuard.fromList('127.0.0.0/8'),
  ...overrides,
});

/** `count` events of an instance in one outbox transaction, their payloads numbered `n` from `from`. */
export const emitEvents = (
  db: TestDatabase,
  instanceId: string,
  from: number,
  count: number,
  shape: (n: number) => { eventType: string; payload?: Record<string, unknown> } = () => ({ eventType: 'messages', payload: { instanceName: instanceId } }),
) =>
  db.dataSource.transaction((manager) =>
    new OutboxRepository(db.dataSource).within(manager).insert(
      instanceId,
      Array.from({ length: count }, (_, n) => {
        const { eventType, payload } = shape(n);
        return { eventType, chatId: `chat-${n % 3}`, payload: { EventType: eventType, ...payload, n: from + n } };
      }),
    ),
  );

/** A sink row of every event (no filters), as the API would write it. */
export const addSink = (
  db: TestDatabase,
  kind: Exclude<SinkKind, 'webhook'>,
  id: string,
  instanceId: string | null,
  url: string,
  options: Record<string, unknown>,
) =>
  new WebhookRepository(db.dataSource).insert(
    id,
    instanceId,
    { kind, url, options, enabled: true, events: [], excludeMessages: [], addUrlEvents: false, addUrlTypesMessages: false, includeToken: false },
    generateWebhookSecret(),
  ) as Promise<WebhookRow>;

/** A relay over the test database (not started). */
export const sinkRelay = (db: TestDatabase, config: WebhookRelayConfig = sinkRelayConfig(), bus = new InProcessBus()) =>
  new WebhookRelay(
    new DeliveryRepository(db.dataSource),
    new WebhookRepository(db.dataSource),
    new InstanceRepository(db.dataSource),
    bus,
    config,
    createLogger('relay-test', 'silent'),
  );

/** Resolves once a failed attempt of this kind is recorded for the scope: the relay has seen the outage. */
export const failedAttemptSeen = async (db: TestDatabase, scope: { instanceId: string } | { global: true }, kind: SinkKind) =>
  (await new DeliveryRepository(db.dataSource).recentErrors(scope, 1, kind)).length > 0;
