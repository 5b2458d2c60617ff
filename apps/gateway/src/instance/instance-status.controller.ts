import { Controller, Get, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { INSTANCE_STATUS_EXAMPLE } from './dto/instance.examples';
import { InstanceStatusResponse } from './dto/instance.response';
import { InstanceService } from './instance.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

/**
 * `GET /status`: the instance's status, as `GET /instance/status` answers it. No spec version lists it;
 * a published n8n node calls it with the instance token as its credential test.
 */
@ApiArea('Instance')
@Controller()
@UseGuards(InstanceGuard)
export class InstanceStatusController {
  constructor(private readonly instances: InstanceService) {}

  @Get('status')
  @ApiReply(InstanceStatusResponse, { example: INSTANCE_STATUS_EXAMPLE })
  @ApiOperation({
    summary: "Show the instance's status (short path)",
    description: '`GET /instance/status` under a shorter path, answered the same way; a published n8n node calls it to test its credential. Not in uazapiGO.',
  })
  status(@CurrentInstance() instance: RequestInstance): Promise<InstanceStatusResponse> {
    return this.instances.status(instance);
  }
}
