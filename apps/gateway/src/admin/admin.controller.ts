import { Body, Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import { AdminGuard } from '../common/auth.guards';
import { InstanceService } from '../instance/instance.service';
import { AdminService } from './admin.service';
import { CreateInstanceDto, UpdateAdminFieldsDto } from './dto/admin.dto';

@Controller()
@UseGuards(AdminGuard)
export class AdminController {
  constructor(
    private readonly instances: InstanceService,
    private readonly admin: AdminService,
  ) {}

  @Post(['instance/create', 'instance/init'])
  @HttpCode(HttpStatus.OK)
  create(@Body() dto: CreateInstanceDto) {
    return this.instances.create(dto);
  }

  @Get('instance/all')
  all() {
    return this.instances.listAll();
  }

  @Post('instance/updateAdminFields')
  @HttpCode(HttpStatus.OK)
  updateAdminFields(@Body() dto: UpdateAdminFieldsDto) {
    return this.instances.updateAdminFields(dto.id, dto);
  }

  @Post('admin/restart')
  @HttpCode(HttpStatus.ACCEPTED)
  restart() {
    return this.admin.restart();
  }

  @Post('admin/token/rotate')
  @HttpCode(HttpStatus.OK)
  rotate() {
    return this.admin.rotateToken();
  }
}
