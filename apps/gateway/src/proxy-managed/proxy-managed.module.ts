import { Module } from '@nestjs/common';
import { ProxyManagedController } from './proxy-managed.controller';
import { ProxyManagedService } from './proxy-managed.service';

/** The API area `Proxy`: the managed proxies. Exports ProxyManagedService, which the instance area uses to pick one. */
@Module({
  controllers: [ProxyManagedController],
  providers: [ProxyManagedService],
  exports: [ProxyManagedService],
})
export class ProxyManagedModule {}
