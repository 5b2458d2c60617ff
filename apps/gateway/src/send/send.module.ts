import { Module } from '@nestjs/common';
import { AsyncQueueModule } from '../message/async/async-queue.module';
import { InteractiveRepliesService } from './interactive/interactive-replies.service';
import { InteractiveSendController } from './interactive/interactive-send.controller';
import { InteractiveSendService } from './interactive/interactive-send.service';
import { SendContentTools } from './send-content-tools';
import { SendRequester } from './send-requester';
import { SendController } from './send.controller';
import { SendService } from './send.service';
import { StatusAudience } from './status/status-audience';
import { StatusSender } from './status/status-sender';

/** The API area `Send`: plain, status and interactive sends. Exports SendContentTools, which the areas that upload media (mass sending, quick replies, profile, groups, channels) share. */
@Module({
  imports: [AsyncQueueModule],
  controllers: [SendController, InteractiveSendController],
  providers: [SendService, SendContentTools, SendRequester, InteractiveRepliesService, InteractiveSendService, StatusAudience, StatusSender],
  exports: [SendContentTools],
})
export class SendModule {}
