import { Module } from '@nestjs/common';
import { GlobalWebhookController, WebhookController } from './webhook.controller';
import { WebhookService } from './webhook.service';

/** The API area `Webhooks & SSE`: an instance's webhooks and the global one. */
@Module({
  controllers: [WebhookController, GlobalWebhookController],
  providers: [WebhookService],
})
export class WebhookModule {}
