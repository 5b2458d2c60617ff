import { Module } from '@nestjs/common';
import { ChatwootConfigController, ChatwootWebhookController } from './chatwoot.controller';
import { ChatwootService } from './chatwoot.service';

/** The API area `Chatwoot`: its configuration and the webhook Chatwoot calls back. */
@Module({
  controllers: [ChatwootConfigController, ChatwootWebhookController],
  providers: [ChatwootService],
})
export class ChatwootModule {}
