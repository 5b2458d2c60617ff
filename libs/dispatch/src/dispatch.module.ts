import { type DynamicModule, Inject, Injectable, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import type { Logger } from '@gw/platform';
import type { DataSource } from 'typeorm';
import { AsyncDispatcher, type AsyncDispatcherConfig } from './async-dispatcher';

const DISPATCHER = Symbol('ASYNC_DISPATCHER');

@Injectable()
class AsyncDispatcherLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(DISPATCHER) private readonly dispatcher: AsyncDispatcher) {}

  onApplicationBootstrap(): void {
    this.dispatcher.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.dispatcher.stop();
  }
}

/** The async-send dispatcher as a Nest module: started with the application, stopped (drained) with it. */
@Module({})
export class DispatchModule {
  static register(options: { dataSource: DataSource; bus: Bus; config: AsyncDispatcherConfig; logger: Logger }): DynamicModule {
    return {
      module: DispatchModule,
      providers: [
        { provide: DISPATCHER, useFactory: () => new AsyncDispatcher(options.dataSource, options.bus, options.config, options.logger.child({ component: 'async-dispatcher' })) },
        AsyncDispatcherLifecycle,
      ],
    };
  }
}
