import { Controller, Delete, Get, HttpCode, HttpStatus, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../../common/auth.guards';
import { AsyncQueueService } from './async-queue.service';
import { ApiReply } from '../../openapi/api-reply.decorator';
import { SCHEMAS } from '../../openapi/schemas';

@Controller('message/async')
@UseGuards(InstanceGuard)
export class AsyncQueueController {
  constructor(private readonly queue: AsyncQueueService) {}

  @Get()
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.AsyncQueueStatus, {
    example: {
      response: 'Async queue status',
      instanceId: 'r183e2ef9597845',
      queue: { status: 'queued', pending: 1, processingNow: false, acceptingNewMessages: true, sessionReady: true, resetting: false },
    },
  })
  status(@CurrentInstance() instance: InstanceEntity) {
    return this.queue.status(instance);
  }

  @Delete()
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.AsyncQueueCleared, {
    example: {
      response: 'Async queue cleared',
      instanceId: 'r183e2ef9597845',
      stats: { trackedJobsCleared: 3, bufferedJobsMarkedCanceled: 0, drainedChannelJobs: 0, clearedOverflowJobs: 0, persistedQueuedCanceled: 3 },
    },
  })
  clear(@CurrentInstance() instance: InstanceEntity) {
    return this.queue.clear(instance);
  }
}
