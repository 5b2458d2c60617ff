import { Module } from '@nestjs/common';
import { SseController } from './sse.controller';

/** The API area `Webhooks & SSE`: the server-sent event stream. */
@Module({
  controllers: [SseController],
})
export class SseModule {}
