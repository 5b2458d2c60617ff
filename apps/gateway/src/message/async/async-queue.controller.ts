import { Controller, Delete, Get, HttpCode, HttpStatus, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../../common/auth.guards';
import { AsyncQueueService } from './async-queue.service';

@Controller('message/async')
@UseGuards(InstanceGuard)
export class AsyncQueueController {
  constructor(private readonly queue: AsyncQueueService) {}

  @Get()
  @HttpCode(HttpStatus.OK)
  status(@CurrentInstance() instance: InstanceEntity) {
    return this.queue.status(instance);
  }

  @Delete()
  @HttpCode(HttpStatus.OK)
  clear(@CurrentInstance() instance: InstanceEntity) {
    return this.queue.clear(instance);
  }
}
