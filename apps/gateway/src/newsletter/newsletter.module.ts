import { Module } from '@nestjs/common';
import { SendModule } from '../send/send.module';
import { NewsletterController } from './newsletter.controller';
import { NewsletterService } from './newsletter.service';

/** The API area `Channels`. */
@Module({
  imports: [SendModule],
  controllers: [NewsletterController],
  providers: [NewsletterService],
})
export class NewsletterModule {}
