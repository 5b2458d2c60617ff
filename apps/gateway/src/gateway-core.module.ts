import { type DynamicModule, Global, Module } from '@nestjs/common';
import { AdminTokenService } from './admin/admin-token.service';
import { ADMIN_TOKEN_CHECK, type AdminTokenCheck } from './common/admin-token-check';
import { AdminGuard, InstanceGuard } from './common/auth.guards';
import { RateLimitService } from './common/rate-limit.service';
import type { GatewayRuntime } from './runtime/gateway-runtime';
import { BUS, DATA_SOURCE, GATEWAY_CONFIG, LOGGER } from './runtime/tokens';
import { SessionClient } from './session/session.client';

/**
 * What every area of the gateway shares, global so an area module lists only its own pieces: the process's
 * runtime values (config, data source, bus, logger), the session worker's client, the rate limits and the
 * admin token, which the guards of every area's controllers check. Nothing area-specific belongs here.
 */
@Global()
@Module({})
export class GatewayCoreModule {
  static register(runtime: GatewayRuntime): DynamicModule {
    const exported = [
      GATEWAY_CONFIG,
      DATA_SOURCE,
      BUS,
      LOGGER,
      SessionClient,
      RateLimitService,
      AdminTokenService,
      ADMIN_TOKEN_CHECK,
      AdminGuard,
      InstanceGuard,
    ];
    return {
      module: GatewayCoreModule,
      providers: [
        { provide: GATEWAY_CONFIG, useValue: runtime.config },
        { provide: DATA_SOURCE, useValue: runtime.dataSource },
        { provide: BUS, useValue: runtime.bus },
        { provide: LOGGER, useValue: runtime.logger },
        SessionClient,
        RateLimitService,
        AdminTokenService,
        // The guards' view of the admin token (common/ does not import the admin area); typed so the compiler checks it.
        { provide: ADMIN_TOKEN_CHECK, useFactory: (tokens: AdminTokenService): AdminTokenCheck => tokens, inject: [AdminTokenService] },
        AdminGuard,
        InstanceGuard,
      ],
      exports: exported,
    };
  }
}
