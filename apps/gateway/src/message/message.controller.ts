import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { FindMessagesDto } from './dto/find-messages.dto';
import { MessageService } from './message.service';

@Controller('message')
@UseGuards(InstanceGuard)
export class MessageController {
  constructor(private readonly messages: MessageService) {}

  @Post('find')
  @HttpCode(200)
  find(@CurrentInstance() instance: InstanceEntity, @Body() dto: FindMessagesDto) {
    return this.messages.find(instance, dto);
  }
}
