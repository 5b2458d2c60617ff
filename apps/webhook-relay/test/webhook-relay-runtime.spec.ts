import { readChatwootSyncConfig } from '@gw/chatwoot';
import { createLogger, EnvReader } from '@gw/platform';
import { readWebhookRelayConfig } from '@gw/relay';
import { itRunsAsABackgroundService } from '@gw/testing';
import { startWebhookRelay } from '../src/runtime';

describe(startWebhookRelay.name, () => {
  itRunsAsABackgroundService((host) =>
    startWebhookRelay(
      { ...host, delivery: readWebhookRelayConfig(new EnvReader({})), chatwoot: readChatwootSyncConfig(new EnvReader({})) },
      createLogger('webhook-relay', 'silent'),
    ),
  );
});
