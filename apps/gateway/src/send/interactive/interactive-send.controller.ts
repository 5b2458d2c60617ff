import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../../common/auth.guards';
import { SendCarouselDto, SendLocationButtonDto, SendMenuDto, SendPixButtonDto, SendRequestPaymentDto } from './interactive.dto';
import { InteractiveSendService } from './interactive-send.service';
import { SentMessageResponse } from '../../common/dto/message.response';
import { ApiReply } from '../../openapi/api-reply.decorator';
import {
  SEND_CAROUSEL_EXAMPLES,
  SEND_LOCATION_BUTTON_EXAMPLES,
  SEND_MENU_EXAMPLES,
  SEND_PIX_BUTTON_EXAMPLES,
  SEND_REQUEST_PAYMENT_EXAMPLES,
} from '../dto/send.examples';
import { ApiArea } from '../../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../../common/request-instance';

/** The interactive send endpoints: menus, carousel, PIX button, payment request and location request. */
@ApiArea('Send')
@Controller()
@UseGuards(InstanceGuard)
export class InteractiveSendController {
  constructor(private readonly sends: InteractiveSendService) {}

  @Post('send/menu')
  @HttpCode(200)
  @ApiReply(SentMessageResponse, { examples: SEND_MENU_EXAMPLES })
  @ApiOperation({
    summary: 'Send an interactive menu (buttons, carousel, list or poll)',
    description:
      'One endpoint for four kinds of interactive message, chosen by `type`: `button` (quick replies, URL, call and copy buttons), `carousel` (cards with an image and buttons), `list` (a menu in sections behind `listButton`) and `poll` (`selectableCount` of the `choices`). Each entry of `choices` is one line of the text format the reference documents (`text|id`, `[Section]`, `text|url:…`). Takes the common send fields too (`delay`, `readchat`, `replyid`, `mentions`, `track_source`, `async`…) and fills `{{placeholders}}` from the chat.',
  })
  menu(@CurrentInstance() instance: RequestInstance, @Body() dto: SendMenuDto): Promise<SentMessageResponse> {
    return this.sends.sendMenu(instance, dto);
  }

  @Post('send/carousel')
  @HttpCode(200)
  @ApiReply(SentMessageResponse, { examples: SEND_CAROUSEL_EXAMPLES })
  @ApiOperation({
    summary: 'Send a media carousel with buttons',
    description:
      'Sends a carousel of cards, each with a `text`, an `image` (or video) and its `buttons`, under a main `text`: the same message as `/send/menu` with `type: carousel`, in a structured payload. Takes the common send fields too (`delay`, `readchat`, `replyid`, `mentions`, `track_source`, `async`…) and fills `{{placeholders}}` from the chat.',
  })
  carousel(@CurrentInstance() instance: RequestInstance, @Body() dto: SendCarouselDto): Promise<SentMessageResponse> {
    return this.sends.sendCarousel(instance, dto);
  }

  @Post('send/pix-button')
  @HttpCode(200)
  @ApiReply(SentMessageResponse, { examples: SEND_PIX_BUTTON_EXAMPLES })
  @ApiOperation({
    summary: 'Send a PIX button',
    description:
      'Sends WhatsApp\'s native PIX payment button for the key in `pixKey`; `pixType` is `CPF`, `CNPJ`, `PHONE`, `EMAIL` or `EVP` (any case) and `pixName` the receiver\'s name (default "Pix"). The recipient sees the receiver, the name and the key. Takes the common send fields too (`delay`, `readchat`, `replyid`, `mentions`, `track_source`, `async`…) and fills `{{placeholders}}` from the chat.',
  })
  pixButton(@CurrentInstance() instance: RequestInstance, @Body() dto: SendPixButtonDto): Promise<SentMessageResponse> {
    return this.sends.sendPixButton(instance, dto);
  }

  @Post('send/request-payment')
  @HttpCode(200)
  @ApiReply(SentMessageResponse, { examples: SEND_REQUEST_PAYMENT_EXAMPLES })
  @ApiOperation({
    summary: 'Request a payment ("Review and pay")',
    description:
      'Sends a payment request with WhatsApp\'s native "Review and pay" button: the `amount` (BRL by default) with an optional title, text and note; PIX through `pixKey` (required unless disabled), a boleto or invoice attached from `fileUrl`, and an external `paymentLink`. Takes the common send fields too (`delay`, `readchat`, `replyid`, `mentions`, `track_source`, `async`…) and fills `{{placeholders}}` from the chat.',
  })
  requestPayment(@CurrentInstance() instance: RequestInstance, @Body() dto: SendRequestPaymentDto): Promise<SentMessageResponse> {
    return this.sends.sendRequestPayment(instance, dto);
  }

  @Post('send/location-button')
  @HttpCode(200)
  @ApiReply(SentMessageResponse, { examples: SEND_LOCATION_BUTTON_EXAMPLES })
  @ApiOperation({
    summary: "Ask for the user's location",
    description:
      "Sends a message with a button that asks the recipient to share their location; tapping it opens WhatsApp's location sharing. Takes the common send fields too (`delay`, `readchat`, `replyid`, `mentions`, `track_source`, `async`…) and fills `{{placeholders}}` from the chat.",
  })
  locationButton(@CurrentInstance() instance: RequestInstance, @Body() dto: SendLocationButtonDto): Promise<SentMessageResponse> {
    return this.sends.sendLocationButton(instance, dto);
  }
}
