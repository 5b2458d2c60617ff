import { Module } from '@nestjs/common';
import { AuditRecorder } from './audit-recorder';
import { AdminAuditController, InstanceAuditController } from './audit.controller';
import { AuditService } from './audit.service';

/** The audit log's routes and its recorder (whose Fastify hook the HTTP app adds). `@Audited` routes of every area mark requests through AuditInterceptor, which needs nothing of this module. */
@Module({
  controllers: [AdminAuditController, InstanceAuditController],
  providers: [AuditRecorder, AuditService],
})
export class AuditModule {}
