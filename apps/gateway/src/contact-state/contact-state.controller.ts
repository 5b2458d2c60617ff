import { Body, Controller, Get, Headers, HttpCode, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { BlockDto, ChatLabelsDto, EditLabelDto, RefreshLabelsDto } from './contact-state.dto';
import { ContactStateService } from './contact-state.service';

@Controller()
@UseGuards(InstanceGuard)
export class ContactStateController {
  constructor(private readonly state: ContactStateService) {}

  @Get('labels')
  labels(@CurrentInstance() instance: InstanceEntity) {
    return this.state.listLabels(instance);
  }

  @Post('labels/refresh')
  @HttpCode(200)
  refreshLabels(@CurrentInstance() instance: InstanceEntity, @Body() dto: RefreshLabelsDto, @Headers('x-request-id') requestId?: string) {
    return this.state.refreshLabels(instance, dto.force === true, requestId);
  }

  @Post('label/edit')
  @HttpCode(200)
  editLabel(@CurrentInstance() instance: InstanceEntity, @Body() dto: EditLabelDto) {
    return this.state.editLabel(instance, dto);
  }

  @Post('chat/labels')
  @HttpCode(200)
  chatLabels(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatLabelsDto) {
    return this.state.chatLabels(instance, dto);
  }

  @Post('chat/block')
  @HttpCode(200)
  block(@CurrentInstance() instance: InstanceEntity, @Body() dto: BlockDto) {
    return this.state.block(instance, dto.number, dto.block);
  }

  @Get('chat/blocklist')
  blocklist(@CurrentInstance() instance: InstanceEntity) {
    return this.state.getBlocklist(instance);
  }
}
