import { Audited } from '../audit/audited.decorator';
import { Body, Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import { AdminGuard } from '../common/auth.guards';
import { InstanceService } from '../instance/instance.service';
import { AdminService } from './admin.service';
import { CreateInstanceDto, UpdateAdminFieldsDto } from './dto/admin.dto';
import { ADMIN_TOKEN_ROTATED_EXAMPLE, RESTART_SCHEDULED_EXAMPLE } from './dto/admin.examples';
import { AdminTokenRotatedResponse, RestartScheduledResponse } from './dto/admin.response';
import { DISCONNECTED_INSTANCE_EXAMPLE, INSTANCE_EXAMPLE } from '../common/dto/common.examples';
import { InstanceResponse } from '../common/dto/instance.response';
import { INSTANCE_CREATED_EXAMPLE } from '../instance/dto/instance.examples';
import { InstanceCreatedResponse } from '../instance/dto/instance.response';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';

@ApiArea('Admin')
@Controller()
@UseGuards(AdminGuard)
export class AdminController {
  constructor(
    private readonly instances: InstanceService,
    private readonly admin: AdminService,
  ) {}

  @Audited('instance.create', { target: (_body, result) => (result as { instance?: { id?: string } } | undefined)?.instance?.id })
  @Post(['instance/create', 'instance/init'])
  @HttpCode(HttpStatus.OK)
  @ApiReply(InstanceCreatedResponse, { example: INSTANCE_CREATED_EXAMPLE })
  @ApiOperation({
    summary: 'Create an instance',
    description:
      "Creates a WhatsApp instance from its `name` (and optional admin fields); it starts disconnected. The answer holds the instance's `token`: keep it, every other instance route asks for it. `/instance/init` is the same route under its older name.",
  })
  create(@Body() dto: CreateInstanceDto): Promise<InstanceCreatedResponse> {
    return this.instances.create(dto);
  }

  @Get('instance/all')
  @ApiReply(InstanceResponse, { isArray: true, example: [INSTANCE_EXAMPLE, { ...DISCONNECTED_INSTANCE_EXAMPLE, id: 'r283e2ef9597846', name: 'instancia-2' }] })
  @ApiOperation({
    summary: 'List every instance',
    description:
      'Every instance of the gateway: id, name, token, status (`disconnected`, `connecting`, `connected`, `hibernated`), creation date, last disconnection and its reason, and the profile when connected.',
  })
  all(): Promise<InstanceResponse[]> {
    return this.instances.listAll();
  }

  @Audited('instance.updateAdminFields', { target: (body) => (typeof body.id === 'string' ? body.id : null) })
  @Post('instance/updateAdminFields')
  @HttpCode(HttpStatus.OK)
  @ApiReply(InstanceResponse, { example: { ...INSTANCE_EXAMPLE, adminField01: 'cliente-42' } })
  @ApiOperation({
    summary: "Update an instance's admin fields",
    description:
      "Sets `adminField01` / `adminField02` of the instance `id`: free metadata for the operator's own systems, stored with the instance and visible to its owner, who cannot change them.",
  })
  updateAdminFields(@Body() dto: UpdateAdminFieldsDto): Promise<InstanceResponse> {
    return this.instances.updateAdminFields(dto.id, dto);
  }

  @Audited('admin.restart')
  @Post('admin/restart')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiReply(RestartScheduledResponse, { example: RESTART_SCHEDULED_EXAMPLE })
  @ApiOperation({
    summary: 'Restart every session',
    description:
      'Makes every session reconnect from its stored credentials, as a restart of the application would; use it for general instability only. Instances come back by themselves; none is logged out.',
  })
  restart(): RestartScheduledResponse {
    return this.admin.restart();
  }

  @Audited('admin.token.rotate')
  @Post('admin/token/rotate')
  @HttpCode(HttpStatus.OK)
  @ApiReply(AdminTokenRotatedResponse, { example: ADMIN_TOKEN_ROTATED_EXAMPLE })
  @ApiOperation({
    summary: 'Rotate the admin token',
    description: 'Makes a new `admintoken` and answers it; the old one stops working at once. Send the current token in the header and keep the new one.',
  })
  rotate(): Promise<AdminTokenRotatedResponse> {
    return this.admin.rotateToken();
  }
}
