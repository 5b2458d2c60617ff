import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ChatPresenceDto, SendContactDto, SendLocationDto, SendMediaDto, SendTextDto } from './dto/send-common.dto';
import { SendService } from './send.service';
import { StatusSender } from './status/status-sender';
import { SendStatusDto } from './status/status.dto';
import { SentMessageResponse, StatusSentResponse } from '../common/dto/message.response';
import { ReplyResponse } from '../common/dto/reply.response';
import { ApiReply } from '../openapi/api-reply.decorator';
import {
  CHAT_PRESENCE_EXAMPLE,
  SEND_CONTACT_EXAMPLES,
  SEND_LOCATION_EXAMPLES,
  SEND_MEDIA_EXAMPLES,
  SEND_TEXT_EXAMPLES,
  STATUS_SENT_EXAMPLE,
} from './dto/send.examples';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

@ApiArea('Send')
@Controller()
@UseGuards(InstanceGuard)
export class SendController {
  constructor(
    private readonly sends: SendService,
    private readonly statuses: StatusSender,
  ) {}

  @Post('send/text')
  @HttpCode(200)
  @ApiReply(SentMessageResponse, { examples: SEND_TEXT_EXAMPLES })
  @ApiOperation({
    summary: 'Send a text message',
    description:
      "Sends a text message to a contact, a group or a channel (`number` as the channel's `…@newsletter` JID), with an automatic or customised link preview (`linkPreview*`). Takes the common send fields too (`delay`, `readchat`, `replyid`, `mentions`, `track_source`, `async`…) and fills `{{placeholders}}` from the chat.",
  })
  text(@CurrentInstance() instance: RequestInstance, @Body() dto: SendTextDto): Promise<SentMessageResponse> {
    return this.sends.sendText(instance, dto);
  }

  @Post('send/media')
  @HttpCode(200)
  @ApiReply(SentMessageResponse, { examples: SEND_MEDIA_EXAMPLES })
  @ApiOperation({
    summary: 'Send media (image, video, audio or document)',
    description:
      'Sends an image, video, `videoplay`, document, audio, voice note (`ptt`/`myaudio`), round video (`ptv`) or sticker, from a URL or base64 in `file`, with an optional caption in `text` and a `docName` for documents. Takes the common send fields too (`delay`, `readchat`, `replyid`, `mentions`, `track_source`, `async`…) and fills `{{placeholders}}` from the chat.',
  })
  media(@CurrentInstance() instance: RequestInstance, @Body() dto: SendMediaDto): Promise<SentMessageResponse> {
    return this.sends.sendMedia(instance, dto);
  }

  @Post('send/contact')
  @HttpCode(200)
  @ApiReply(SentMessageResponse, { examples: SEND_CONTACT_EXAMPLES })
  @ApiOperation({
    summary: 'Send a contact card (vCard)',
    description:
      'Sends a contact card built from `fullName`, `phoneNumber` (several numbers separated by commas), `organization`, `email` and `url`; WhatsApp shows it as a card the recipient can save. Takes the common send fields too (`delay`, `readchat`, `replyid`, `mentions`, `track_source`, `async`…) and fills `{{placeholders}}` from the chat.',
  })
  contact(@CurrentInstance() instance: RequestInstance, @Body() dto: SendContactDto): Promise<SentMessageResponse> {
    return this.sends.sendContact(instance, dto);
  }

  @Post('send/location')
  @HttpCode(200)
  @ApiReply(SentMessageResponse, { examples: SEND_LOCATION_EXAMPLES })
  @ApiOperation({
    summary: 'Send a location',
    description:
      'Sends a geographic location: `latitude` and `longitude` (required), with an optional place `name` and `address` shown on the map pin. Takes the common send fields too (`delay`, `readchat`, `replyid`, `mentions`, `track_source`, `async`…) and fills `{{placeholders}}` from the chat.',
  })
  location(@CurrentInstance() instance: RequestInstance, @Body() dto: SendLocationDto): Promise<SentMessageResponse> {
    return this.sends.sendLocation(instance, dto);
  }

  @Post('send/status')
  @HttpCode(200)
  @ApiReply(StatusSentResponse, { example: STATUS_SENT_EXAMPLE })
  @ApiOperation({
    summary: 'Post a status (story)',
    description:
      'Posts a WhatsApp status of type text (with `background_color` and `font`), image, video or audio. Without `recipients` it goes to the usual audience; `recipients` limits it to those numbers (invalid ones are dropped, with the reason in `debug`) and `max_recipients` caps the audience.',
  })
  status(@CurrentInstance() instance: RequestInstance, @Body() dto: SendStatusDto): Promise<StatusSentResponse> {
    return this.statuses.sendStatus(instance, dto);
  }

  @Post('message/presence')
  @HttpCode(200)
  @ApiReply(ReplyResponse, { example: CHAT_PRESENCE_EXAMPLE })
  @ApiOperation({
    summary: 'Send a chat presence ("typing…", "recording…")',
    description:
      'Shows a presence in one chat: `composing` ("typing…"), `recording` ("recording audio…") or `paused` (stops showing it). With `delay` it is turned off after that many milliseconds, at most 5 minutes; the answer comes at once.',
  })
  presence(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatPresenceDto): Promise<ReplyResponse> {
    return this.sends.chatPresence(instance, dto);
  }
}
