import { Body, Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { BlockDto, ChatLabelsDto } from './dto/chat.dto';
import { ChatService } from './chat.service';

/** `/chat/*`: a chat's labels and the blocklist. */
@Controller('chat')
@UseGuards(InstanceGuard)
export class ChatController {
  constructor(private readonly chats: ChatService) {}

  @Post('labels')
  @HttpCode(HttpStatus.OK)
  labels(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatLabelsDto) {
    return this.chats.setLabels(instance, dto);
  }

  @Post('block')
  @HttpCode(HttpStatus.OK)
  block(@CurrentInstance() instance: InstanceEntity, @Body() dto: BlockDto) {
    return this.chats.block(instance, dto);
  }

  @Get('blocklist')
  blocklist(@CurrentInstance() instance: InstanceEntity) {
    return this.chats.blocklist(instance);
  }
}
