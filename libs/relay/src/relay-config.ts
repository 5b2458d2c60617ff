import { type EnvReader, ConfigError, SsrfGuard } from '@gw/platform';
import { DEFAULT_RETRY_SCHEDULE_MS, parseSchedule } from './retry-schedule';
import { type EnvSink, readEnvSinks } from './sinks/env-sinks';

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
  /**
   * Outbox events fanned out per transaction, and deliveries claimed per statement. A receiver with
   * half of it claimed here and not yet sent is left out of the next claims.
   */
  batchSize: number;
  /** Deliveries of one lane claimed together (its head and those right behind it), sent one by one. */
  laneRunLength: number;
  /** Fallback when no notice arrives (retries falling due, another process's events without NATS). */
  pollIntervalMs: number;
  /** How long a claimed delivery is ours before another relay may take it over. */
  claimMs: number;
  /**
   * Least time from one fan-out (or claim) to the next when the last one was not full. Both are poked
   * often (a fan-out by every event notice, a claim by every fan-out and recorded batch), and every
   * claim walks every lane: passing on each poke makes many small passes (half of the fan-outs found
   * nothing) that cost the database more than they move. Bounds the latency it adds.
   */
  passGapMs: number;
  /**
   * WEBHOOK_DIRECT (default true): fan-out claims the deliveries its relay can send at once (a lane with nothing
   * pending, or only this relay's run of it), so they go out without a claim statement (ADR 0046). False: every
   * delivery is inserted pending and waits for a claim, as before.
   */
  direct?: boolean;
  ssrf: SsrfGuard;
  /**
   * The global broker sinks env names (RABBITMQ_URL, NATS_SINK_URL, KAFKA_BROKERS…): written as global
   * sink rows when the relay starts, removed when env no longer names them. Not given: left alone.
   */
  envSinks?: EnvSink[];
}

export const WEBHOOK_RELAY_DEFAULTS = {
  requestTimeoutMs: 10_000,
  maxInFlightPerReceiver: 8,
  disableAfterMs: 5 * 24 * 3_600_000,
  batchSize: 500,
  laneRunLength: 20,
  pollIntervalMs: 1_000,
  claimMs: 30_000,
  passGapMs: 10,
} as const;

/**
 * The relay's variables: PUBLIC_BASE_URL (the envelopes' BaseUrl), WEBHOOK_INCLUDE_TOKEN,
 * WEBHOOK_RETRY_SCHEDULE (`5s,5m,30m,2h,5h,10h,10h`), WEBHOOK_TIMEOUT_MS, WEBHOOK_MAX_IN_FLIGHT,
 * WEBHOOK_DISABLE_AFTER (a duration, default 5d), WEBHOOK_DIRECT, SSRF_ALLOWLIST (CIDRs), and the global broker sinks
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
    direct: env.boolean('WEBHOOK_DIRECT', true),
    retryScheduleMs: durations('WEBHOOK_RETRY_SCHEDULE', DEFAULT_RETRY_SCHEDULE_MS),
    requestTimeoutMs: env.integer('WEBHOOK_TIMEOUT_MS', WEBHOOK_RELAY_DEFAULTS.requestTimeoutMs, { min: 100, max: 120_000 }),
    maxInFlightPerReceiver: env.integer('WEBHOOK_MAX_IN_FLIGHT', WEBHOOK_RELAY_DEFAULTS.maxInFlightPerReceiver, { min: 1, max: 1_000 }),
    disableAfterMs: durations('WEBHOOK_DISABLE_AFTER', [WEBHOOK_RELAY_DEFAULTS.disableAfterMs])[0],
    ssrf,
    envSinks: readEnvSinks(env),
  };
}
