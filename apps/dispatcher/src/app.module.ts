import { type DynamicModule, Module } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { DispatchModule, RetentionModule } from '@gw/dispatch';
import type { Logger } from '@gw/platform';
import { DataSource } from 'typeorm';
import type { DispatcherConfig } from './dispatcher-config';

export const DISPATCHER_CONFIG = Symbol('DISPATCHER_CONFIG');
export const LOGGER = Symbol('LOGGER');

/** What the runtime has opened before Nest starts; providers inject `DataSource` and `Bus` directly. */
export interface DispatcherRuntime {
  config: DispatcherConfig;
  dataSource: DataSource;
  bus: Bus;
  logger: Logger;
}

@Module({})
export class AppModule {
  static register(runtime: DispatcherRuntime): DynamicModule {
    return {
      module: AppModule,
      imports: [
        DispatchModule.register({ dataSource: runtime.dataSource, bus: runtime.bus, config: runtime.config.dispatch, logger: runtime.logger }),
        RetentionModule.register({ dataSource: runtime.dataSource, config: runtime.config.retention, logger: runtime.logger }),
      ],
      providers: [
        { provide: DISPATCHER_CONFIG, useValue: runtime.config },
        { provide: DataSource, useValue: runtime.dataSource },
        { provide: Bus, useValue: runtime.bus },
        { provide: LOGGER, useValue: runtime.logger },
      ],
    };
  }
}
