import { type EnvReader, ConfigError, SsrfGuard } from '@gw/platform';
import { DEFAULT_RETRY_SCHEDULE_MS, parseSchedule } from './retry-schedule';
import { readEnvSinks } from './sinks/env-sinks';
import { WEBHOOK_RELAY_DEFAULTS, type WebhookRelayConfig } from './webhook-relay';

/**
 * The relay's variables: PUBLIC_BASE_URL (the envelopes' BaseUrl), WEBHOOK_INCLUDE_TOKEN,
 * WEBHOOK_RETRY_SCHEDULE (`5s,5m,30m,2h,5h,10h,10h`), WEBHOOK_TIMEOUT_MS, WEBHOOK_MAX_IN_FLIGHT,
 * WEBHOOK_DISABLE_AFTER (a duration, default 5d), SSRF_ALLOWLIST (CIDRs), and the global broker sinks
 * (RABBITMQ_URL, NATS_SINK_URL, KAFKA_BROKERS…: see readEnvSinks), which share the retry schedule.
 */
export function readWebhookRelayConfig(env: EnvReader): WebhookRelayConfig {
  const durations = (name: string, fallback: number[]) => {
    const raw = env.optionalString(name);
    if (!raw) return fallback;
    try {
      return parseSchedule(raw);
    } catch (error) {
      throw new ConfigError(name, (error as Error).message);
    }
  };
  let ssrf: SsrfGuard;
  try {
    ssrf = SsrfGuard.fromList(env.optionalString('SSRF_ALLOWLIST'));
  } catch (error) {
    throw new ConfigError('SSRF_ALLOWLIST', (error as Error).message);
  }
  return {
    ...WEBHOOK_RELAY_DEFAULTS,
    publicBaseUrl: env.url('PUBLIC_BASE_URL', ['http:', 'https:'], 'http://localhost:8080') as string,
    includeToken: env.boolean('WEBHOOK_INCLUDE_TOKEN', false),
    retryScheduleMs: durations('WEBHOOK_RETRY_SCHEDULE', DEFAULT_RETRY_SCHEDULE_MS),
    requestTimeoutMs: env.integer('WEBHOOK_TIMEOUT_MS', WEBHOOK_RELAY_DEFAULTS.requestTimeoutMs, { min: 100, max: 120_000 }),
    maxInFlightPerReceiver: env.integer('WEBHOOK_MAX_IN_FLIGHT', WEBHOOK_RELAY_DEFAULTS.maxInFlightPerReceiver, { min: 1, max: 1_000 }),
    disableAfterMs: durations('WEBHOOK_DISABLE_AFTER', [WEBHOOK_RELAY_DEFAULTS.disableAfterMs])[0],
    ssrf,
    envSinks: readEnvSinks(env),
  };
}
