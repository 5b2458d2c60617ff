import { readAsyncDispatcherConfig, readRetentionConfig, type AsyncDispatcherConfig, type RetentionConfig } from '@gw/dispatch';
import { ConfigError, type EnvReader } from '@gw/platform';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface DispatcherConfig {
  databaseUrl: string;
  natsUrl: string;
  /** Port of `GET /health` and `GET /ready`. */
  healthPort: number;
  healthHost: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** The async-send queue (see readAsyncDispatcherConfig for its variables). */
  dispatch: AsyncDispatcherConfig;
  /** The scheduled purge (MESSAGE_RETENTION_DAYS, RETENTION_INTERVAL_MS). */
  retention: RetentionConfig;
}

/** Every variable the dispatcher reads, parsed once at boot. */
export function loadDispatcherConfig(env: EnvReader): DispatcherConfig {
  return {
    databaseUrl: requiredUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    natsUrl: requiredUrl(env, 'NATS_URL', ['nats:', 'tls:']),
    healthPort: env.port('HEALTH_PORT', 8083),
    healthHost: env.string('HEALTH_HOST', '0.0.0.0'),
    logLevel: env.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    dispatch: readAsyncDispatcherConfig(env),
    retention: readRetentionConfig(env),
  };
}

function requiredUrl(env: EnvReader, name: string, protocols: string[]): string {
  const url = env.url(name, protocols);
  if (url === undefined) throw new ConfigError(name, 'is required');
  return url;
}
