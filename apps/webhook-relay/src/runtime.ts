import type { Logger } from '@gw/platform';
import { type RunningService, startService } from '@gw/service-host';
import { AppModule } from './app.module';
import type { WebhookRelayConfig } from './webhook-relay-config';

export type RunningWebhookRelay = RunningService;

/** Opens Postgres (migrated) and NATS, starts the Nest context, then the health port. */
export function startWebhookRelay(config: WebhookRelayConfig, logger: Logger): Promise<RunningWebhookRelay> {
  return startService(
    'webhook-relay',
    config,
    logger,
    ({ dataSource, bus }) => AppModule.register({ config, dataSource, bus, logger }),
    (repository) => ({
      webhookBacklog: () => repository.webhookBacklog(),
    }),
    // The relay warms its connections before it is ready (WebhookRelay.warmUp): keep them warm.
    { keepConnections: true },
  );
}
