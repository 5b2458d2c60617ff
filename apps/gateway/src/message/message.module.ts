import { Module } from '@nestjs/common';
import { HistorySyncService } from './history-sync.service';
import { MessageActionsService } from './message-actions.service';
import { MessageDownloadService } from './message-download.service';
import { MessageController } from './message.controller';
import { MessageService } from './message.service';

/** The API area `Messages`: find, download, act on and ask for the history of messages. */
@Module({
  controllers: [MessageController],
  providers: [MessageService, MessageActionsService, MessageDownloadService, HistorySyncService],
})
export class MessageModule {}
