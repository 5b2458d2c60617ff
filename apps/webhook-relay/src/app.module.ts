import { type DynamicModule, Module } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { PersistenceModule, type Database } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import { WebhookRelayModule } from '@gw/relay';
import { ChatwootSyncModule } from '@gw/chatwoot';
import type { WebhookRelayConfig } from './webhook-relay-config';

export const WEBHOOK_RELAY_CONFIG = Symbol('WEBHOOK_RELAY_CONFIG');
export const LOGGER = Symbol('LOGGER');

/** What the runtime has opened before Nest starts; providers inject the repositories (and `DataSource`) and `Bus` directly. */
export interface WebhookRelayRuntime {
  config: WebhookRelayConfig;
  dataSource: Database;
  bus: Bus;
  logger: Logger;
}

@Module({})
export class AppModule {
  static register(runtime: WebhookRelayRuntime): DynamicModule {
    return {
      module: AppModule,
      imports: [
        // The repositories (and the DataSource), injected by class into the relay.
        PersistenceModule.forDataSource(runtime.dataSource),
        WebhookRelayModule.register({ bus: runtime.bus, config: runtime.config.delivery, logger: runtime.logger }),
        ChatwootSyncModule.register({ bus: runtime.bus, config: runtime.config.chatwoot, logger: runtime.logger }),
      ],
      providers: [
        { provide: WEBHOOK_RELAY_CONFIG, useValue: runtime.config },
        { provide: Bus, useValue: runtime.bus },
        { provide: LOGGER, useValue: runtime.logger },
      ],
    };
  }
}
