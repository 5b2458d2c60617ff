import { ConfigError, type EnvReader, SsrfGuard } from '@gw/platform';
import { hostname } from 'node:os';
import { CHATWOOT_SYNC_DEFAULTS, type ChatwootSyncConfig } from './chatwoot-sync';

/**
 * The bridge's variables: CHATWOOT_SYNC (off: this process runs no bridge jobs; default on),
 * CHATWOOT_TIMEOUT_MS (one call to Chatwoot), CHATWOOT_CLAIM_MS (how long a crashed runner's job waits
 * before another takes it), SSRF_ALLOWLIST (CIDRs a Chatwoot URL may be in although private).
 */
export function readChatwootSyncConfig(env: EnvReader): ChatwootSyncConfig & { enabled: boolean } {
  let ssrf: SsrfGuard;
  try {
    ssrf = SsrfGuard.fromList(env.optionalString('SSRF_ALLOWLIST'));
  } catch (error) {
    throw new ConfigError('SSRF_ALLOWLIST', (error as Error).message);
  }
  return {
    ...CHATWOOT_SYNC_DEFAULTS,
    retryScheduleMs: [...CHATWOOT_SYNC_DEFAULTS.retryScheduleMs],
    enabled: env.boolean('CHATWOOT_SYNC', true),
    runnerId: env.optionalString('WORKER_ID') ?? `chatwoot-${hostname()}`,
    requestTimeoutMs: env.integer('CHATWOOT_TIMEOUT_MS', CHATWOOT_SYNC_DEFAULTS.requestTimeoutMs, { min: 100, max: 120_000 }),
    claimMs: env.integer('CHATWOOT_CLAIM_MS', CHATWOOT_SYNC_DEFAULTS.claimMs, { min: 1_000, max: 3_600_000 }),
    ssrf,
  };
}
