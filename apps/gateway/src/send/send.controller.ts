import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ChatPresenceDto, SendContactDto, SendLocationDto, SendMediaDto, SendTextDto } from './dto/send-common.dto';
import { SendService } from './send.service';
import { StatusSender } from './status/status-sender';
import { SendStatusDto } from './status/status.dto';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SEND_CONTACT_EXAMPLES, SEND_LOCATION_EXAMPLES, SEND_MEDIA_EXAMPLES, SEND_TEXT_EXAMPLES, STATUS_SENT_EXAMPLE } from '../openapi/examples';
import { SCHEMAS } from '../openapi/schemas';

@Controller()
@UseGuards(InstanceGuard)
export class SendController {
  constructor(
    private readonly sends: SendService,
    private readonly statuses: StatusSender,
  ) {}

  @Post('send/text')
  @HttpCode(200)
  @ApiReply(SCHEMAS.SentMessage, { examples: SEND_TEXT_EXAMPLES })
  text(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendTextDto) {
    return this.sends.sendText(instance, dto);
  }

  @Post('send/media')
  @HttpCode(200)
  @ApiReply(SCHEMAS.SentMessage, { examples: SEND_MEDIA_EXAMPLES })
  media(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendMediaDto) {
    return this.sends.sendMedia(instance, dto);
  }

  @Post('send/contact')
  @HttpCode(200)
  @ApiReply(SCHEMAS.SentMessage, { examples: SEND_CONTACT_EXAMPLES })
  contact(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendContactDto) {
    return this.sends.sendContact(instance, dto);
  }

  @Post('send/location')
  @HttpCode(200)
  @ApiReply(SCHEMAS.SentMessage, { examples: SEND_LOCATION_EXAMPLES })
  location(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendLocationDto) {
    return this.sends.sendLocation(instance, dto);
  }

  @Post('send/status')
  @HttpCode(200)
  @ApiReply(SCHEMAS.StatusSent, { example: STATUS_SENT_EXAMPLE })
  status(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendStatusDto) {
    return this.statuses.sendStatus(instance, dto);
  }

  @Post('message/presence')
  @HttpCode(200)
  @ApiReply(SCHEMAS.Response, { example: { response: 'Chat presence sent successfully' } })
  presence(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatPresenceDto) {
    return this.sends.chatPresence(instance, dto);
  }
}
