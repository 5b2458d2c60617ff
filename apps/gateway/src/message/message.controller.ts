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
import { MessageResponse } from '../common/dto/message.response';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';

/** `/message/*` on stored messages (GET|DELETE /message/async is in async/). */
@ApiArea('Messages')
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
  @ApiOperation({
    summary: "Download a message's file",
    description:
      "Gets the file of a media message (image, video, audio, document or sticker) by its `id`: as a link (`fileURL`: this gateway's `/files/{id}`, or a signed link when files are kept in S3; `return_link: false` leaves it out), as base64 (`return_base64`), audio as MP3 or OGG (`generate_mp3`), and optionally its transcription (`transcribe`).",
  })
  download(@CurrentInstance() instance: InstanceEntity, @Body() dto: DownloadDto) {
    return this.downloads.download(instance, dto);
  }

  @Post('find')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.MessagePage, { example: { returnedMessages: 1, messages: [MESSAGE_EXAMPLE], limit: 100, offset: 0, nextOffset: 1, hasMore: false } })
  @ApiOperation({
    summary: 'Find messages',
    description:
      "Searches the stored messages: one exact `id`, a chat's messages (`chatid`), those carrying a `track_source` / `track_id`, newest first, paginated by `limit` and `offset` (the answer says `hasMore` and the `nextOffset`).",
  })
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
  @ApiOperation({
    summary: 'React to a message',
    description:
      'Sends an emoji reaction to a message (`id`) in a private chat or a group; an empty `text` removes the reaction. Answers the reaction message, which the webhooks and SSE report as well.',
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
  @ApiOperation({
    summary: 'Edit a sent message',
    description:
      "Changes the text of a message this account sent (`id`), with WhatsApp's native edit. Answers the edit message with its new id; the webhooks and SSE report the change.",
  })
  edit(@CurrentInstance() instance: InstanceEntity, @Body() dto: EditDto) {
    return this.actions.edit(instance, dto);
  }

  @Post('delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.MessageDeleted, { example: { timestamp: 1704067200000, id: '5511999999999:3EB0C767D71D2B5C' } })
  @ApiOperation({
    summary: 'Delete a message for everyone',
    description:
      'Revokes a message for every participant of the chat, in private chats and groups. The id may be the message id or the full `owner:messageid`; the stored message is marked deleted and a webhook reports it.',
  })
  remove(@CurrentInstance() instance: InstanceEntity, @Body() dto: DeleteDto) {
    return this.actions.remove(instance, dto);
  }

  @Post('pin')
  @HttpCode(HttpStatus.OK)
  @ApiReply(MessageResponse, {
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
  @ApiOperation({
    summary: 'Pin or unpin a message',
    description:
      "Pins a message (`id`) in its chat for `duration` days (1, 7 or 30; 30 otherwise), or unpins it (`pin: false`), with WhatsApp's native pin. Answers the pin message sent for the chat.",
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
  @ApiOperation({
    summary: "Ask WhatsApp for a chat's history",
    description:
      'Asks the phone for older messages of one chat (`number`): `history` (the default) fetches `count` messages before an anchor message, `exact` reloads the message given in `messageid`. The messages arrive later as history-sync events; the answer says the request was sent.',
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
  @ApiOperation({
    summary: 'Mark messages as read',
    description:
      'Marks one or more messages (`id`, a list) as read on WhatsApp, which sends the read receipts and syncs the state to the other devices. Answers a result per message.',
  })
  markRead(@CurrentInstance() instance: InstanceEntity, @Body() dto: MarkReadDto) {
    return this.actions.markRead(instance, dto);
  }
}
