import { Body, Controller, Delete, Get, Headers, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import {
  ChatbotSettingsDto,
  ConnectDto,
  PresenceDto,
  PrivacyDto,
  ProxyDto,
  UpdateDelaySettingsDto,
  UpdateFieldsMapDto,
  UpdateInstanceNameDto,
} from './dto/instance.dto';
import { InstanceService } from './instance.service';

@Controller('instance')
@UseGuards(InstanceGuard)
export class InstanceController {
  constructor(private readonly instances: InstanceService) {}

  @Post('connect')
  @HttpCode(HttpStatus.OK)
  connect(@CurrentInstance() instance: InstanceEntity, @Body() dto: ConnectDto, @Headers('x-request-id') requestId?: string) {
    return this.instances.connect(instance, dto, requestId);
  }

  @Get('status')
  status(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.status(instance);
  }

  @Post('disconnect')
  @HttpCode(HttpStatus.OK)
  disconnect(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.disconnect(instance);
  }

  @Delete()
  remove(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.remove(instance);
  }

  @Post('updateInstanceName')
  @HttpCode(HttpStatus.OK)
  rename(@CurrentInstance() instance: InstanceEntity, @Body() dto: UpdateInstanceNameDto) {
    return this.instances.rename(instance, dto.name);
  }

  @Post('updateDelaySettings')
  @HttpCode(HttpStatus.OK)
  updateDelaySettings(@CurrentInstance() instance: InstanceEntity, @Body() dto: UpdateDelaySettingsDto) {
    return this.instances.updateDelaySettings(instance, dto.msg_delay_min, dto.msg_delay_max);
  }

  @Post('updateFieldsMap')
  @HttpCode(HttpStatus.OK)
  updateFieldsMap(@CurrentInstance() instance: InstanceEntity, @Body() dto: UpdateFieldsMapDto) {
    return this.instances.updateFieldsMap(instance, dto);
  }

  @Post('updatechatbotsettings')
  @HttpCode(HttpStatus.OK)
  updateChatbotSettings(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatbotSettingsDto) {
    return this.instances.updateChatbotSettings(instance, dto);
  }

  @Post('presence')
  @HttpCode(HttpStatus.OK)
  presence(@CurrentInstance() instance: InstanceEntity, @Body() dto: PresenceDto) {
    return this.instances.setPresence(instance, dto.presence);
  }

  @Get('privacy')
  getPrivacy(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.getPrivacy(instance);
  }

  @Post('privacy')
  @HttpCode(HttpStatus.OK)
  setPrivacy(@CurrentInstance() instance: InstanceEntity, @Body() dto: PrivacyDto) {
    return this.instances.setPrivacy(instance, dto);
  }

  @Get('proxy')
  getProxy(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.getProxy(instance);
  }

  @Post('proxy')
  @HttpCode(HttpStatus.OK)
  setProxy(@CurrentInstance() instance: InstanceEntity, @Body() dto: ProxyDto) {
    return this.instances.setProxy(instance, dto);
  }

  @Delete('proxy')
  deleteProxy(@CurrentInstance() instance: InstanceEntity) {
    return this.instances.deleteProxy(instance);
  }
}
