import { Body, Controller, Get, HttpCode, Post, UseGuards } from '@nestjs/common';
import { AdminGuard } from '../common/auth.guards';
import { InstanceService } from '../instance/instance.service';
import { SessionClient } from '../session/session.client';
import { AdminTokenService } from './admin-token.service';
import { CreateInstanceDto, UpdateAdminFieldsDto } from './dto/admin.dto';

@Controller()
@UseGuards(AdminGuard)
export class AdminController {
  constructor(
    private readonly instances: InstanceService,
    private readonly adminTokens: AdminTokenService,
    private readonly sessions: SessionClient,
  ) {}

  @Post(['instance/create', 'instance/init'])
  @HttpCode(200)
  create(@Body() dto: CreateInstanceDto) {
    return this.instances.create(dto);
  }

  @Get('instance/all')
  all() {
    return this.instances.listAll();
  }

  @Post('instance/updateAdminFields')
  @HttpCode(200)
  updateAdminFields(@Body() dto: UpdateAdminFieldsDto) {
    return this.instances.updateAdminFields(dto.id, dto);
  }

  @Post('admin/restart')
  @HttpCode(202)
  restart() {
    this.sessions.restartAll();
    return { message: 'Restart scheduled: every session reconnects gracefully from its stored credentials' };
  }

  @Post('admin/token/rotate')
  @HttpCode(200)
  async rotate() {
    const { token, rotatedAt } = await this.adminTokens.rotate();
    return {
      success: true,
      message: 'Admin token rotated successfully',
      admin_token: token,
      license_sync_triggered: false,
      license_synced: false,
      timestamp: rotatedAt,
    };
  }
}
