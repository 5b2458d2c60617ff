import { Body, Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import { AdminGuard } from '../common/auth.guards';
import { InstanceService } from '../instance/instance.service';
import { AdminService } from './admin.service';
import { CreateInstanceDto, UpdateAdminFieldsDto } from './dto/admin.dto';
import { DISCONNECTED_INSTANCE_EXAMPLE, INSTANCE_EXAMPLE } from '../openapi/examples';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';

@Controller()
@UseGuards(AdminGuard)
export class AdminController {
  constructor(
    private readonly instances: InstanceService,
    private readonly admin: AdminService,
  ) {}

  @Post(['instance/create', 'instance/init'])
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.InstanceCreated, {
    example: {
      response: 'Instance created successfully',
      instance: DISCONNECTED_INSTANCE_EXAMPLE,
      connected: false,
      loggedIn: false,
      name: 'minha-instancia',
      token: DISCONNECTED_INSTANCE_EXAMPLE.token,
      info: 'The instance starts disconnected: call POST /instance/connect with its token to link a WhatsApp account.',
    },
  })
  create(@Body() dto: CreateInstanceDto) {
    return this.instances.create(dto);
  }

  @Get('instance/all')
  @ApiReply(SCHEMAS.Instance, { isArray: true, example: [INSTANCE_EXAMPLE, { ...DISCONNECTED_INSTANCE_EXAMPLE, id: 'r283e2ef9597846', name: 'instancia-2' }] })
  all() {
    return this.instances.listAll();
  }

  @Post('instance/updateAdminFields')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Instance, { example: { ...INSTANCE_EXAMPLE, adminField01: 'cliente-42' } })
  updateAdminFields(@Body() dto: UpdateAdminFieldsDto) {
    return this.instances.updateAdminFields(dto.id, dto);
  }

  @Post('admin/restart')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiReply(SCHEMAS.RestartScheduled, { example: { message: 'Restart scheduled: every session reconnects gracefully from its stored credentials' } })
  restart() {
    return this.admin.restart();
  }

  @Post('admin/token/rotate')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.AdminTokenRotated, {
    example: {
      success: true,
      message: 'Admin token rotated successfully',
      admin_token: '9f2c4e6a8b0d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a',
      license_sync_triggered: false,
      license_synced: false,
      timestamp: '2026-01-01T12:00:00.000Z',
    },
  })
  rotate() {
    return this.admin.rotateToken();
  }
}
