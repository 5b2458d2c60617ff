import { Controller, Delete, Get, HttpCode, HttpStatus, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../../common/auth.guards';
import { AsyncQueueService } from './async-queue.service';
import { ApiReply } from '../../openapi/api-reply.decorator';
import { SCHEMAS } from '../../openapi/schemas';
import { ApiArea } from '../../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';

@ApiArea('Async queue')
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
  @ApiOperation({
    summary: 'Show the async send queue',
    description:
      "A summary of this instance's queue of sends made with `async: true`: its `status` (`idle`, `queued`, `processing`, `waiting_connection`, `resetting`), how many messages are `pending`, whether one is being sent now, and whether it accepts new messages. Mass-sending campaigns (`/sender/*`) are not part of it.",
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
  @ApiOperation({
    summary: 'Clear the async send queue',
    description:
      "Cancels every pending send of this instance's `async: true` queue: the queued messages are marked `Canceled`, and the queue accepts new sends again. Messages already sent and campaigns (`/sender/*`) are not touched. Use it when a backlog is stuck.",
  })
  clear(@CurrentInstance() instance: InstanceEntity) {
    return this.queue.clear(instance);
  }
}
