import { ConfigError, type EnvReader } from '@gw/platform';
import { readWebhookRelayConfig, type WebhookRelayConfig as DeliveryConfig } from '@gw/relay';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface WebhookRelayConfig {
  databaseUrl: string;
  natsUrl: string;
  /** Port of `GET /health` and `GET /ready`. */
  healthPort: number;
  healthHost: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Delivery settings: base URL, retry schedule, timeouts, SSRF allowlist (see libs/relay). */
  delivery: DeliveryConfig;
}

/** Every variable the webhook relay reads, parsed once at boot. */
export function loadWebhookRelayConfig(env: EnvReader): WebhookRelayConfig {
  return {
    databaseUrl: requiredUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    natsUrl: requiredUrl(env, 'NATS_URL', ['nats:', 'tls:']),
    healthPort: env.port('HEALTH_PORT', 8084),
    healthHost: env.string('HEALTH_HOST', '0.0.0.0'),
    logLevel: env.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    delivery: readWebhookRelayConfig(env),
  };
}

function requiredUrl(env: EnvReader, name: string, protocols: string[]): string {
  const url = env.url(name, protocols);
  if (url === undefined) throw new ConfigError(name, 'is required');
  return url;
}
