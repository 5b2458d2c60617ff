import { type DynamicModule, Inject, Injectable, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import { DeliveryRepository, InstanceRepository, WebhookRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { WebhookRelayConfig } from './relay-config';
import { WebhookRelay } from './webhook-relay';

const RELAY = Symbol('WEBHOOK_RELAY');

@Injectable()
class WebhookRelayLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(RELAY) private readonly relay: WebhookRelay) {}

  /** Warm (pool, statements, webhooks) before the application, and so the health port's `/ready`, is up. */
  async onApplicationBootstrap(): Promise<void> {
    await this.relay.warmUp();
    this.relay.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.relay.stop();
  }
}

/**
 * The webhook relay as a Nest module: started with the application, stopped (drained) with it. The
 * repositories come from PersistenceModule (global), registered once by the process.
 */
@Module({})
export class WebhookRelayModule {
  static register(options: { bus: Bus; config: WebhookRelayConfig; logger: Logger }): DynamicModule {
    return {
      module: WebhookRelayModule,
      providers: [
        {
          provide: RELAY,
          useFactory: (deliveries: DeliveryRepository, webhooks: WebhookRepository, instances: InstanceRepository) =>
            new WebhookRelay(deliveries, webhooks, instances, options.bus, options.config, options.logger.child({ component: 'webhook-relay' })),
          inject: [DeliveryRepository, WebhookRepository, InstanceRepository],
        },
        WebhookRelayLifecycle,
      ],
    };
  }
}
