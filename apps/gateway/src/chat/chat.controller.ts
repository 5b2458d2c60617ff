import { Body, Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { BlockDto, ChatLabelsDto } from './dto/chat.dto';
import { EditLeadDto } from './dto/edit-lead.dto';
import { FindChatsDto } from './dto/find-chats.dto';
import { ChatService } from './chat.service';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { CHAT_EXAMPLE, CHAT_TOTALS_EXAMPLE } from '../openapi/examples';

/** `/chat/*`: a chat's labels, the blocklist and the lead store. */
@Controller('chat')
@UseGuards(InstanceGuard)
export class ChatController {
  constructor(private readonly chats: ChatService) {}

  @Post('labels')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.ChatLabels, { example: { response: 'Labels updated successfully', editions: ['Added label 10 to chat', 'Removed label 5 from chat'] } })
  labels(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatLabelsDto) {
    return this.chats.setLabels(instance, dto);
  }

  @Post('block')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Blocklist, { example: { response: 'Blocked successfully', blockList: ['5511999999999@s.whatsapp.net', '5511888888888@s.whatsapp.net'] } })
  block(@CurrentInstance() instance: InstanceEntity, @Body() dto: BlockDto) {
    return this.chats.block(instance, dto);
  }

  @Get('blocklist')
  @ApiReply(SCHEMAS.Blocklist, { example: { blockList: ['5511999999999@s.whatsapp.net', '5511888888888@s.whatsapp.net'] } })
  blocklist(@CurrentInstance() instance: InstanceEntity) {
    return this.chats.blocklist(instance);
  }

  @Post('editLead')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Chat, { example: CHAT_EXAMPLE })
  editLead(@CurrentInstance() instance: InstanceEntity, @Body() dto: EditLeadDto) {
    return this.chats.editLead(instance, dto);
  }

  @Post('find')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.ChatPage, {
    example: { chats: [CHAT_EXAMPLE], totalChatsStats: CHAT_TOTALS_EXAMPLE, pagination: { totalRecords: 1, limit: 20, offset: 0 } },
  })
  find(@CurrentInstance() instance: InstanceEntity, @Body() dto: FindChatsDto) {
    return this.chats.find(instance, dto);
  }
}
