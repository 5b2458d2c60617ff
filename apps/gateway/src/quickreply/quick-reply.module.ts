import { Module } from '@nestjs/common';
import { SendModule } from '../send/send.module';
import { QuickReplyController } from './quick-reply.controller';
import { QuickReplyService } from './quick-reply.service';

/** The API area `Quick replies`. */
@Module({
  imports: [SendModule],
  controllers: [QuickReplyController],
  providers: [QuickReplyService],
})
export class QuickReplyModule {}
