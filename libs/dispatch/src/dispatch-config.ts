import type { EnvReader } from '@gw/platform';
import { hostname } from 'node:os';
import { ASYNC_DISPATCHER_DEFAULTS, type AsyncDispatcherConfig } from './async-dispatcher';

/**
 * The dispatcher's variables: DISPATCHER_ID (default `<hostname>-<pid>`), DISPATCH_CLAIM_MS,
 * DISPATCH_POLL_MS, DISPATCH_MAX_LANES, DISPATCH_SEND_TIMEOUT_MS, DISPATCH_MAX_ATTEMPTS,
 * DISPATCH_DISCONNECTED_RETRY_MS, FAILOVER_WAIT_MS (as the gateway's: how long a send follows a takeover).
 */
export function readAsyncDispatcherConfig(env: EnvReader): AsyncDispatcherConfig {
  const defaults = ASYNC_DISPATCHER_DEFAULTS;
  return {
    ...defaults,
    dispatcherId: env.optionalString('DISPATCHER_ID') ?? `${hostname()}-${process.pid}`,
    claimMs: env.integer('DISPATCH_CLAIM_MS', defaults.claimMs, { min: 1_000, max: 600_000 }),
    pollIntervalMs: env.integer('DISPATCH_POLL_MS', defaults.pollIntervalMs, { min: 10, max: 60_000 }),
    maxLanes: env.integer('DISPATCH_MAX_LANES', defaults.maxLanes, { min: 1, max: 10_000 }),
    sendTimeoutMs: env.integer('DISPATCH_SEND_TIMEOUT_MS', defaults.sendTimeoutMs, { min: 1_000, max: 600_000 }),
    maxAttempts: env.integer('DISPATCH_MAX_ATTEMPTS', defaults.maxAttempts, { min: 1, max: 100 }),
    disconnectedRetryMs: env.integer('DISPATCH_DISCONNECTED_RETRY_MS', defaults.disconnectedRetryMs, { min: 100, max: 600_000 }),
    failoverWaitMs: env.integer('FAILOVER_WAIT_MS', defaults.failoverWaitMs, { min: 0, max: 600_000 }),
  };
}
