import type { Logger } from '@gw/platform';
import { type RunningService, startService } from '@gw/service-host';
import { AppModule } from './app.module';
import type { DispatcherConfig } from './dispatcher-config';

export type RunningDispatcher = RunningService;

/** Opens Postgres (migrated) and NATS, starts the Nest context, then the health port. */
export function startDispatcher(config: DispatcherConfig, logger: Logger): Promise<RunningDispatcher> {
  return startService(
    'dispatcher',
    config,
    logger,
    ({ dataSource, bus }) => AppModule.register({ config, dataSource, bus, logger }),
    (repository) => ({
      asyncQueue: () => repository.asyncQueueByState(),
    }),
  );
}
