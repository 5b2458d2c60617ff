import { Body, Controller, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { FindMessagesDto } from './dto/find-messages.dto';
import { DeleteDto, DownloadDto, EditDto, HistorySyncDto, MarkReadDto, PinDto, ReactDto } from './dto/message-actions.dto';
import { HistorySyncService } from './history-sync.service';
import { MessageDownloadService } from './message-download.service';
import { MessageActionsService } from './message-actions.service';
import { MessageService } from './message.service';
import {
  HISTORY_SYNC_EXAMPLE,
  MARK_READ_EXAMPLE,
  MESSAGE_DELETED_EXAMPLE,
  MESSAGE_DOWNLOAD_EXAMPLE,
  MESSAGE_EDITED_EXAMPLE,
  MESSAGE_PAGE_EXAMPLE,
  MESSAGE_PINNED_EXAMPLE,
  MESSAGE_REACTED_EXAMPLE,
} from './dto/message.examples';
import {
  HistorySyncResponse,
  MarkReadResponse,
  MessageActionResponse,
  MessageDeletedResponse,
  MessageDownloadResponse,
  MessagePageResponse,
  MessagePinnedResponse,
} from './dto/message.response';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

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
  @ApiReply(MessageDownloadResponse, { example: MESSAGE_DOWNLOAD_EXAMPLE })
  @ApiOperation({
    summary: "Download a message's file",
    description:
      "Gets the file of a media message (image, video, audio, document or sticker) by its `id`: as a link (`fileURL`: this gateway's `/files/{id}`, or a signed link when files are kept in S3; `return_link: false` leaves it out), as base64 (`return_base64`), audio as MP3 or OGG (`generate_mp3`), and optionally its transcription (`transcribe`).",
  })
  download(@CurrentInstance() instance: RequestInstance, @Body() dto: DownloadDto): Promise<MessageDownloadResponse> {
    return this.downloads.download(instance, dto);
  }

  @Post('find')
  @HttpCode(HttpStatus.OK)
  @ApiReply(MessagePageResponse, { example: MESSAGE_PAGE_EXAMPLE })
  @ApiOperation({
    summary: 'Find messages',
    description:
      "Searches the stored messages: one exact `id`, a chat's messages (`chatid`), those carrying a `track_source` / `track_id`, newest first, paginated by `limit` and `offset` (the answer says `hasMore` and the `nextOffset`).",
  })
  find(@CurrentInstance() instance: RequestInstance, @Body() dto: FindMessagesDto): Promise<MessagePageResponse> {
    return this.messages.find(instance, dto);
  }

  @Post('react')
  @HttpCode(HttpStatus.OK)
  @ApiReply(MessageActionResponse, { example: MESSAGE_REACTED_EXAMPLE })
  @ApiOperation({
    summary: 'React to a message',
    description:
      'Sends an emoji reaction to a message (`id`) in a private chat or a group; an empty `text` removes the reaction. Answers the reaction message, which the webhooks and SSE report as well.',
  })
  react(@CurrentInstance() instance: RequestInstance, @Body() dto: ReactDto): Promise<MessageActionResponse> {
    return this.actions.react(instance, dto);
  }

  @Post('edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(MessageActionResponse, { example: MESSAGE_EDITED_EXAMPLE })
  @ApiOperation({
    summary: 'Edit a sent message',
    description:
      "Changes the text of a message this account sent (`id`), with WhatsApp's native edit. Answers the edit message with its new id; the webhooks and SSE report the change.",
  })
  edit(@CurrentInstance() instance: RequestInstance, @Body() dto: EditDto): Promise<MessageActionResponse> {
    return this.actions.edit(instance, dto);
  }

  @Post('delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(MessageDeletedResponse, { example: MESSAGE_DELETED_EXAMPLE })
  @ApiOperation({
    summary: 'Delete a message for everyone',
    description:
      'Revokes a message for every participant of the chat, in private chats and groups. The id may be the message id or the full `owner:messageid`; the stored message is marked deleted and a webhook reports it.',
  })
  remove(@CurrentInstance() instance: RequestInstance, @Body() dto: DeleteDto): Promise<MessageDeletedResponse> {
    return this.actions.remove(instance, dto);
  }

  @Post('pin')
  @HttpCode(HttpStatus.OK)
  @ApiReply(MessagePinnedResponse, { description: 'The pin (or unpin) message sent for the chat', example: MESSAGE_PINNED_EXAMPLE })
  @ApiOperation({
    summary: 'Pin or unpin a message',
    description:
      "Pins a message (`id`) in its chat for `duration` days (1, 7 or 30; 30 otherwise), or unpins it (`pin: false`), with WhatsApp's native pin. Answers the pin message sent for the chat.",
  })
  pin(@CurrentInstance() instance: RequestInstance, @Body() dto: PinDto): Promise<MessagePinnedResponse> {
    return this.actions.pin(instance, dto);
  }

  @Post('history-sync')
  @HttpCode(HttpStatus.OK)
  @ApiReply(HistorySyncResponse, { example: HISTORY_SYNC_EXAMPLE })
  @ApiOperation({
    summary: "Ask WhatsApp for a chat's history",
    description:
      'Asks the phone for older messages of one chat (`number`): `history` (the default) fetches `count` messages before an anchor message, `exact` reloads the message given in `messageid`. The messages arrive later as history-sync events; the answer says the request was sent.',
  })
  historySync(@CurrentInstance() instance: RequestInstance, @Body() dto: HistorySyncDto): Promise<HistorySyncResponse> {
    return this.history.request(instance, dto);
  }

  @Post('markread')
  @HttpCode(HttpStatus.OK)
  @ApiReply(MarkReadResponse, { example: MARK_READ_EXAMPLE })
  @ApiOperation({
    summary: 'Mark messages as read',
    description:
      'Marks one or more messages (`id`, a list) as read on WhatsApp, which sends the read receipts and syncs the state to the other devices. Answers a result per message.',
  })
  markRead(@CurrentInstance() instance: RequestInstance, @Body() dto: MarkReadDto): Promise<MarkReadResponse> {
    return this.actions.markRead(instance, dto);
  }
}
