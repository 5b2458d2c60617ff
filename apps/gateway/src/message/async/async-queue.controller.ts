import { Controller, Delete, Get, HttpCode, HttpStatus, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../../common/auth.guards';
import { AsyncQueueService } from './async-queue.service';
import { ApiReply } from '../../openapi/api-reply.decorator';
import { ASYNC_QUEUE_CLEARED_EXAMPLE, ASYNC_QUEUE_STATUS_EXAMPLE } from './dto/async-queue.examples';
import { AsyncQueueClearedResponse, AsyncQueueStatusResponse } from './dto/async-queue.response';
import { ApiArea } from '../../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../../common/request-instance';

@ApiArea('Async queue')
@Controller('message/async')
@UseGuards(InstanceGuard)
export class AsyncQueueController {
  constructor(private readonly queue: AsyncQueueService) {}

  @Get()
  @HttpCode(HttpStatus.OK)
  @ApiReply(AsyncQueueStatusResponse, { example: ASYNC_QUEUE_STATUS_EXAMPLE })
  @ApiOperation({
    summary: 'Show the async send queue',
    description:
      "A summary of this instance's queue of sends made with `async: true`: its `status` (`idle`, `queued`, `processing`, `waiting_connection`, `resetting`), how many messages are `pending`, whether one is being sent now, and whether it accepts new messages. Mass-sending campaigns (`/sender/*`) are not part of it.",
  })
  status(@CurrentInstance() instance: RequestInstance): Promise<AsyncQueueStatusResponse> {
    return this.queue.status(instance);
  }

  @Delete()
  @HttpCode(HttpStatus.OK)
  @ApiReply(AsyncQueueClearedResponse, { example: ASYNC_QUEUE_CLEARED_EXAMPLE })
  @ApiOperation({
    summary: 'Clear the async send queue',
    description:
      "Cancels every pending send of this instance's `async: true` queue: the queued messages are marked `Canceled`, and the queue accepts new sends again. Messages already sent and campaigns (`/sender/*`) are not touched. Use it when a backlog is stuck.",
  })
  clear(@CurrentInstance() instance: RequestInstance): Promise<AsyncQueueClearedResponse> {
    return this.queue.clear(instance);
  }
}
