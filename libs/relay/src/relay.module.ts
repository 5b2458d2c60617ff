import { type DynamicModule, Inject, Injectable, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import type { Logger } from '@gw/platform';
import type { DataSource } from 'typeorm';
import { WebhookRelay, type WebhookRelayConfig } from './webhook-relay';

const RELAY = Symbol('WEBHOOK_RELAY');

@Injectable()
class WebhookRelayLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(RELAY) private readonly relay: WebhookRelay) {}

  onApplicationBootstrap(): void {
    this.relay.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.relay.stop();
  }
}

/** The webhook relay as a Nest module: started with the application, stopped (drained) with it. */
@Module({})
export class WebhookRelayModule {
  static register(options: { dataSource: DataSource; bus: Bus; config: WebhookRelayConfig; logger: Logger }): DynamicModule {
    return {
      module: WebhookRelayModule,
      providers: [
        {
          provide: RELAY,
          useFactory: () => new WebhookRelay(options.dataSource, options.bus, options.config, options.logger.child({ component: 'webhook-relay' })),
        },
        WebhookRelayLifecycle,
      ],
    };
  }
}
