import type { Database } from '@gw/persistence';
import type { DynamicModule } from '@nestjs/common';
import type { Bus } from '@gw/bus';
import type { Logger } from '@gw/platform';
import type { GatewayConfig } from './gateway-config';

/** What the process hands the gateway's Nest app: its config and the connections it opened. */
export interface GatewayRuntime {
  config: GatewayConfig;
  dataSource: Database;
  bus: Bus;
  logger: Logger;
  /** The other services' modules when they run in this process (the embedded default). */
  embedded?: DynamicModule[];
}
