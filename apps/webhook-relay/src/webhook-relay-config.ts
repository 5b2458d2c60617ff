import { type ChatwootSyncConfig, readChatwootSyncConfig } from '@gw/chatwoot';
import type { EnvReader } from '@gw/platform';
import { readWebhookRelayConfig, type WebhookRelayConfig as DeliveryConfig } from '@gw/relay';
import { readServiceHostConfig, type ServiceHostConfig } from '@gw/service-host';

export interface WebhookRelayConfig extends ServiceHostConfig {
  /** Delivery settings: base URL, retry schedule, timeouts, SSRF allowlist (see libs/relay). */
  delivery: DeliveryConfig;
  /** The Chatwoot bridge's worker hosted here (CHATWOOT_SYNC, CHATWOOT_TIMEOUT_MS, CHATWOOT_CLAIM_MS; see libs/chatwoot). */
  chatwoot: ChatwootSyncConfig & { enabled: boolean };
}

/** Every variable the webhook relay reads, parsed once at boot. */
export function loadWebhookRelayConfig(env: EnvReader): WebhookRelayConfig {
  return { ...readServiceHostConfig(env, 8084), delivery: readWebhookRelayConfig(env), chatwoot: readChatwootSyncConfig(env) };
}
