import { Module } from '@nestjs/common';
import { AdminDeliveriesController, SinkDeliveriesController, WebhookDeliveriesController } from './delivery-log.controller';
import { DeliveryLogService } from './delivery-log.service';

/** The recent delivery errors of webhooks and event sinks (areas `Webhooks & SSE`, `Event sinks`, `Admin`). */
@Module({
  controllers: [WebhookDeliveriesController, SinkDeliveriesController, AdminDeliveriesController],
  providers: [DeliveryLogService],
})
export class DeliveryModule {}
