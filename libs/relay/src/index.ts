export { deliveryUrl, EXCLUDE_FLAGS, matchWebhooks, webhookWants } from './webhook-filter';
export { DEFAULT_RETRY_SCHEDULE_MS, nextAttemptDelay, parseRetryAfter, parseSchedule } from './retry-schedule';
export { generateWebhookSecret, signWebhook } from './signature';
export { WEBHOOK_RELAY_DEFAULTS, WebhookRelay } from './webhook-relay';
export type { WebhookRelayConfig } from './webhook-relay';
export { readWebhookRelayConfig } from './relay-config';
export { WebhookRelayModule } from './relay.module';
export { OutboxFollower } from './outbox-follower';
export type { OutboxFollowerOptions } from './outbox-follower';
