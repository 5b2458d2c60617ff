import { type DynamicModule, Module } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { ChatbotModule } from '@gw/chatbot';
import { DispatchModule, RetentionModule } from '@gw/dispatch';
import { PersistenceModule, type Database } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { DispatcherConfig } from './dispatcher-config';

export const DISPATCHER_CONFIG = Symbol('DISPATCHER_CONFIG');
export const LOGGER = Symbol('LOGGER');

/** What the runtime has opened before Nest starts; providers inject the repositories (and `DataSource`) and `Bus` directly. */
export interface DispatcherRuntime {
  config: DispatcherConfig;
  dataSource: Database;
  bus: Bus;
  logger: Logger;
}

@Module({})
export class AppModule {
  static register(runtime: DispatcherRuntime): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // The repositories (and the DataSource), injected by class into the modules below.
        PersistenceModule.forDataSource(runtime.dataSource),
        DispatchModule.register({ bus: runtime.bus, config: runtime.config.dispatch, logger: runtime.logger }),
        RetentionModule.register({ config: runtime.config.retention, logger: runtime.logger }),
        // The chatbot: its outbox follower admits received messages into rounds, its runner answers them.
        ChatbotModule.register({ bus: runtime.bus, config: runtime.config.chatbot, logger: runtime.logger }),
      ],
      providers: [
        { provide: DISPATCHER_CONFIG, useValue: runtime.config },
        { provide: Bus, useValue: runtime.bus },
        { provide: LOGGER, useValue: runtime.logger },
      ],
    };
  }
}
