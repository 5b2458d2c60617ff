import { Body, Controller, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { FindMessagesDto } from './dto/find-messages.dto';
import { DeleteDto, DownloadDto, EditDto, HistorySyncDto, MarkReadDto, PinDto, ReactDto } from './dto/message-actions.dto';
import { HistorySyncService } from './history-sync.service';
import { MessageDownloadService } from './message-download.service';
import { MessageActionsService } from './message-actions.service';
import { MessageService } from './message.service';
import { MESSAGE_EXAMPLE } from '../openapi/examples';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';

/** `/message/*` on stored messages (GET|DELETE /message/async is in async/). */
@Controller('message')
@UseGuards(InstanceGuard)
export class MessageController {
  constructor(
    private readonly messages: MessageService,
    private readonly actions: MessageActionsService,
    private readonly downloads: MessageDownloadService,
    private readonly history: HistorySyncService,
  ) {}

  @Post('download')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.MessageDownload, {
    example: { fileURL: 'https://gateway.example.com/files/f9a8b7c6d5e4f3a2', mimetype: 'audio/ogg; codecs=opus', base64Data: '', transcription: '' },
  })
  download(@CurrentInstance() instance: InstanceEntity, @Body() dto: DownloadDto) {
    return this.downloads.download(instance, dto);
  }

  @Post('find')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.MessagePage, { example: { returnedMessages: 1, messages: [MESSAGE_EXAMPLE], limit: 100, offset: 0, nextOffset: 1, hasMore: false } })
  find(@CurrentInstance() instance: InstanceEntity, @Body() dto: FindMessagesDto) {
    return this.messages.find(instance, dto);
  }

  @Post('react')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.MessageAction, {
    example: {
      id: '5511999999999:3EB0A1B2C3D4E5F6',
      messageid: '3EB0A1B2C3D4E5F6',
      content: { text: '👍' },
      messageTimestamp: 1704067200000,
      messageType: 'reaction',
      status: 'Pending',
      owner: '5511999999999',
      reaction: '3EB0C767D71D2B5C',
    },
  })
  react(@CurrentInstance() instance: InstanceEntity, @Body() dto: ReactDto) {
    return this.actions.react(instance, dto);
  }

  @Post('edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.MessageAction, {
    example: {
      id: '5511999999999:3EB0C767D71D2B5C',
      messageid: '3EB0C767D71D2B5C',
      content: { text: 'Texto editado da mensagem' },
      messageTimestamp: 1704067200000,
      messageType: 'Conversation',
      status: 'Sent',
      owner: '5511999999999',
    },
  })
  edit(@CurrentInstance() instance: InstanceEntity, @Body() dto: EditDto) {
    return this.actions.edit(instance, dto);
  }

  @Post('delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.MessageDeleted, { example: { timestamp: 1704067200000, id: '5511999999999:3EB0C767D71D2B5C' } })
  remove(@CurrentInstance() instance: InstanceEntity, @Body() dto: DeleteDto) {
    return this.actions.remove(instance, dto);
  }

  @Post('pin')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Message, {
    description: 'The pin (or unpin) message sent for the chat',
    example: {
      ...MESSAGE_EXAMPLE,
      id: '5511999999999:3EB0F1E2D3C4B5A6',
      messageid: '3EB0F1E2D3C4B5A6',
      fromMe: true,
      messageType: 'PinInChatMessage',
      status: 'Pending',
      text: '',
      reaction: '📌',
      targetMessageID: '3EB0C767D71D2B5C',
      pinned: true,
    },
  })
  pin(@CurrentInstance() instance: InstanceEntity, @Body() dto: PinDto) {
    return this.actions.pin(instance, dto);
  }

  @Post('history-sync')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.HistorySync, {
    example: {
      success: true,
      mode: 'history',
      message: 'History sync request sent. Messages will be received as history sync events.',
      details: {
        request_id: 'req_01HQ5Z8K3M',
        chatid: '5511888888888@s.whatsapp.net',
        anchor_messageid: '3EB0C767D71D2B5C',
        anchor_timestamp: 1704067200000,
        count: 50,
      },
    },
  })
  historySync(@CurrentInstance() instance: InstanceEntity, @Body() dto: HistorySyncDto) {
    return this.history.request(instance, dto);
  }

  @Post('markread')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.MarkRead, {
    example: {
      results: [
        { message_id: '62AD1AD844E518180227BF68DA7ED710', status: 'success' },
        { message_id: 'ECB9DE48EB41F77BFA8491BFA8D6EF9B', status: 'error', error: 'Message not found' },
      ],
    },
  })
  markRead(@CurrentInstance() instance: InstanceEntity, @Body() dto: MarkReadDto) {
    return this.actions.markRead(instance, dto);
  }
}
