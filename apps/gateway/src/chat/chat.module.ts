import { Module } from '@nestjs/common';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';

/** The API area `Chats`, and the chat-level routes of `Blocks`, `CRM` and `Labels` (its handlers carry their own area). */
@Module({
  controllers: [ChatController],
  providers: [ChatService],
})
export class ChatModule {}
