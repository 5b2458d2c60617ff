import { type DynamicModule, Inject, Injectable, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import { CampaignRepository, ChatRepository, InstanceRepository, LeaseRepository, SendLimitRepository, SendQueueRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
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

/**
 * The dispatcher as a Nest module: the async-send queue and the campaign scheduler, started and stopped with the application.
 * The repositories come from PersistenceModule (global), registered once by the process.
 */
@Module({})
export class DispatchModule {
  static register(options: { bus: Bus; config: AsyncDispatcherConfig; logger: Logger }): DynamicModule {
    return {
      module: DispatchModule,
      providers: [
        {
          provide: DISPATCHER,
          useFactory: (
            queue: SendQueueRepository,
            instances: InstanceRepository,
            chats: ChatRepository,
            leases: LeaseRepository,
            limits: SendLimitRepository,
          ) =>
            new AsyncDispatcher(queue, instances, chats, options.bus, options.config, options.logger.child({ component: 'async-dispatcher' }), leases, limits),
          inject: [SendQueueRepository, InstanceRepository, ChatRepository, LeaseRepository, SendLimitRepository],
        },
        // Scheduled sends: campaigns release their messages into the async queue at their own pace.
        {
          provide: CAMPAIGNS,
          useFactory: (campaigns: CampaignRepository) =>
            new CampaignScheduler(
              campaigns,
              options.bus,
              { ...CAMPAIGN_SCHEDULER_DEFAULTS, pollIntervalMs: options.config.pollIntervalMs },
              options.logger.child({ component: 'campaign-scheduler' }),
            ),
          inject: [CampaignRepository],
        },
        AsyncDispatcherLifecycle,
      ],
    };
  }
}
