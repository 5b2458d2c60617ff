import { type DynamicModule, Module } from '@nestjs/common';
import { Bus } from '@gw/bus';
import type { Logger } from '@gw/platform';
import { WebhookRelayModule } from '@gw/relay';
import { DataSource } from 'typeorm';
import type { WebhookRelayConfig } from './webhook-relay-config';

export const WEBHOOK_RELAY_CONFIG = Symbol('WEBHOOK_RELAY_CONFIG');
export const LOGGER = Symbol('LOGGER');

/** What the runtime has opened before Nest starts; providers inject `DataSource` and `Bus` directly. */
export interface WebhookRelayRuntime {
  config: WebhookRelayConfig;
  dataSource: DataSource;
  bus: Bus;
  logger: Logger;
}

@Module({})
export class AppModule {
  static register(runtime: WebhookRelayRuntime): DynamicModule {
    return {
      module: AppModule,
      imports: [WebhookRelayModule.register({ dataSource: runtime.dataSource, bus: runtime.bus, config: runtime.config.delivery, logger: runtime.logger })],
      providers: [
        { provide: WEBHOOK_RELAY_CONFIG, useValue: runtime.config },
        { provide: DataSource, useValue: runtime.dataSource },
        { provide: Bus, useValue: runtime.bus },
        { provide: LOGGER, useValue: runtime.logger },
      ],
    };
  }
}
