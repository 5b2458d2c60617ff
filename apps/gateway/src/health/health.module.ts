import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';

/** The API area `Service`: health and readiness (the drain flips readiness through HealthService). */
@Module({
  controllers: [HealthController],
  providers: [HealthService],
})
export class HealthModule {}
