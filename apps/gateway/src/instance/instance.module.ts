import { Module } from '@nestjs/common';
import { AsyncQueueModule } from '../message/async/async-queue.module';
import { ProxyManagedModule } from '../proxy-managed/proxy-managed.module';
import { InstanceRuntimeController } from './instance-runtime.controller';
import { InstanceRuntimeService } from './instance-runtime.service';
import { InstanceStatusController } from './instance-status.controller';
import { InstanceController } from './instance.controller';
import { InstanceService } from './instance.service';
import { SessionExportController, SessionImportController } from './session-move.controller';
import { SessionMoveService } from './session-move.service';

/** The API area `Instance`: lifecycle, status, runtime settings, and moving a session between gateways. Exports InstanceService for the admin area's create/list. */
@Module({
  imports: [AsyncQueueModule, ProxyManagedModule],
  controllers: [InstanceController, InstanceStatusController, InstanceRuntimeController, SessionExportController, SessionImportController],
  providers: [InstanceService, InstanceRuntimeService, SessionMoveService],
  exports: [InstanceService],
})
export class InstanceModule {}
