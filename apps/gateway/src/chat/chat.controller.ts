import { Body, Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { BlockDto, ChatLabelsDto } from './dto/chat.dto';
import { EditLeadDto } from './dto/edit-lead.dto';
import { FindChatsDto } from './dto/find-chats.dto';
import {
  ChatArchiveDto,
  ChatDeleteDto,
  ChatEphemeralDto,
  ChatMuteDto,
  ChatNotesDto,
  ChatNotesEditDto,
  ChatNotesRefreshDto,
  ChatPinDto,
  ChatReadDto,
} from './dto/chat-state.dto';
import { ChatService } from './chat.service';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { CHAT_EXAMPLE, CHAT_TOTALS_EXAMPLE } from '../openapi/examples';

const NOTE = 'Cliente prefere contato no período da tarde';

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

  @Post('pin')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Chat pinned' } })
  pin(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatPinDto) {
    return this.chats.pin(instance, dto);
  }

  @Post('archive')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Chat updated successfully' } })
  archive(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatArchiveDto) {
    return this.chats.archive(instance, dto);
  }

  @Post('read')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Chat read status updated successfully' } })
  read(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatReadDto) {
    return this.chats.read(instance, dto);
  }

  @Post('mute')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Chat mute settings updated successfully' } })
  mute(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatMuteDto) {
    return this.chats.mute(instance, dto);
  }

  @Post('ephemeral')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.ChatEphemeral, {
    example: {
      response: 'Ephemeral timer updated successfully',
      chat: { ...CHAT_EXAMPLE, wa_ephemeralExpiration: 604800 },
      ephemeral: { enabled: true, seconds: 604800, label: '7d' },
    },
  })
  ephemeral(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatEphemeralDto) {
    return this.chats.ephemeral(instance, dto);
  }

  @Post('notes')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.ChatNotes, { example: { chat: { ...CHAT_EXAMPLE, wa_notes: NOTE }, wa_notes: NOTE, source: 'local' } })
  notes(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatNotesDto) {
    return this.chats.notes(instance, dto);
  }

  @Post('notes/refresh')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.ChatNotes, { example: { chat: { ...CHAT_EXAMPLE, wa_notes: NOTE }, wa_notes: NOTE, source: 'appstate_reload' } })
  refreshNotes(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatNotesRefreshDto) {
    return this.chats.refreshNotes(instance, dto);
  }

  @Post('notes/edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.ChatNotesEdited, {
    example: { response: 'Chat notes updated', chat: { ...CHAT_EXAMPLE, wa_notes: NOTE }, wa_notes: NOTE, source: 'api' },
  })
  editNotes(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatNotesEditDto) {
    return this.chats.editNotes(instance, dto);
  }

  @Post('delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.ChatDeleted, {
    example: {
      response: 'Chat deletion process completed',
      actions: ['Chat deleted from WhatsApp', 'Chat deleted from database', 'Messages associated with chat deleted from database: 42'],
      errors: [],
    },
  })
  delete(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatDeleteDto) {
    return this.chats.deleteChat(instance, dto);
  }
}
