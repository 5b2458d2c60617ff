import { type DynamicModule, Inject, Injectable, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import type { Logger } from '@gw/platform';
import type { DataSource } from 'typeorm';
import { AsyncDispatcher, type AsyncDispatcherConfig } from './async-dispatcher';
import { CAMPAIGN_SCHEDULER_DEFAULTS, CampaignScheduler } from './campaign-scheduler';

const DISPATCHER = Symbol('ASYNC_DISPATCHER');
const CAMPAIGNS = Symbol('CAMPAIGN_SCHEDULER');

@Injectable()
class AsyncDispatcherLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(DISPATCHER) private readonly dispatcher: AsyncDispatcher,
    @Inject(CAMPAIGNS) private readonly campaigns: CampaignScheduler,
  ) {}

  onApplicationBootstrap(): void {
    this.dispatcher.start();
    this.campaigns.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.campaigns.stop();
    await this.dispatcher.stop();
  }
}

/** The dispatcher as a Nest module: the async-send queue and the campaign scheduler, started and stopped with the application. */
@Module({})
export class DispatchModule {
  static register(options: { dataSource: DataSource; bus: Bus; config: AsyncDispatcherConfig; logger: Logger }): DynamicModule {
    return {
      module: DispatchModule,
      providers: [
        {
          provide: DISPATCHER,
          useFactory: () => new AsyncDispatcher(options.dataSource, options.bus, options.config, options.logger.child({ component: 'async-dispatcher' })),
        },
        // Scheduled sends: campaigns release their messages into the async queue at their own pace.
        {
          provide: CAMPAIGNS,
          useFactory: () =>
            new CampaignScheduler(
              options.dataSource,
              options.bus,
              { ...CAMPAIGN_SCHEDULER_DEFAULTS, pollIntervalMs: options.config.pollIntervalMs },
              options.logger.child({ component: 'campaign-scheduler' }),
            ),
        },
        AsyncDispatcherLifecycle,
      ],
    };
  }
}
