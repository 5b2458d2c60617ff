import { Controller, Get, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { INSTANCE_EXAMPLE } from '../openapi/examples';
import { SCHEMAS } from '../openapi/schemas';
import { InstanceService } from './instance.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';

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
  @ApiReply(SCHEMAS.InstanceStatus, {
    example: {
      instance: INSTANCE_EXAMPLE,
      status: { connected: true, loggedIn: true, jid: { user: '5511999999999', agent: 0, device: 0, server: 's.whatsapp.net' } },
    },
  })
  @ApiOperation({
    summary: "Show the instance's status (short path)",
    description: '`GET /instance/status` under a shorter path, answered the same way; a published n8n node calls it to test its credential. Not in uazapiGO.',
  })
  status(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.status(instance);
  }
}
