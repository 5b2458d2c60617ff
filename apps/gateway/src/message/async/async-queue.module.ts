import { Module } from '@nestjs/common';
import { AsyncQueueController } from './async-queue.controller';
import { AsyncQueueService } from './async-queue.service';

/** The API area `Async queue`. Exports AsyncQueueService: sends enqueue through it, the instance area clears and reports it. */
@Module({
  controllers: [AsyncQueueController],
  providers: [AsyncQueueService],
  exports: [AsyncQueueService],
})
export class AsyncQueueModule {}
