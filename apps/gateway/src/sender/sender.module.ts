import { Module } from '@nestjs/common';
import { SendModule } from '../send/send.module';
import { SenderController } from './sender.controller';
import { SenderService } from './sender.service';

/** The API area `Mass sending`: campaigns, their folders and per-message status. */
@Module({
  imports: [SendModule],
  controllers: [SenderController],
  providers: [SenderService],
})
export class SenderModule {}
