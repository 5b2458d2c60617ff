import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../../common/auth.guards';
import { SendCarouselDto, SendLocationButtonDto, SendMenuDto, SendPixButtonDto, SendRequestPaymentDto } from './interactive.dto';
import { InteractiveSendService } from './interactive-send.service';
import { ApiReply } from '../../openapi/api-reply.decorator';
import {
  SEND_CAROUSEL_EXAMPLES,
  SEND_LOCATION_BUTTON_EXAMPLES,
  SEND_MENU_EXAMPLES,
  SEND_PIX_BUTTON_EXAMPLES,
  SEND_REQUEST_PAYMENT_EXAMPLES,
} from '../../openapi/examples';
import { SCHEMAS } from '../../openapi/schemas';

/** The interactive send endpoints: menus, carousel, PIX button, payment request and location request. */
@Controller()
@UseGuards(InstanceGuard)
export class InteractiveSendController {
  constructor(private readonly sends: InteractiveSendService) {}

  @Post('send/menu')
  @HttpCode(200)
  @ApiReply(SCHEMAS.SentMessage, { examples: SEND_MENU_EXAMPLES })
  menu(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendMenuDto) {
    return this.sends.sendMenu(instance, dto);
  }

  @Post('send/carousel')
  @HttpCode(200)
  @ApiReply(SCHEMAS.SentMessage, { examples: SEND_CAROUSEL_EXAMPLES })
  carousel(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendCarouselDto) {
    return this.sends.sendCarousel(instance, dto);
  }

  @Post('send/pix-button')
  @HttpCode(200)
  @ApiReply(SCHEMAS.SentMessage, { examples: SEND_PIX_BUTTON_EXAMPLES })
  pixButton(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendPixButtonDto) {
    return this.sends.sendPixButton(instance, dto);
  }

  @Post('send/request-payment')
  @HttpCode(200)
  @ApiReply(SCHEMAS.SentMessage, { examples: SEND_REQUEST_PAYMENT_EXAMPLES })
  requestPayment(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendRequestPaymentDto) {
    return this.sends.sendRequestPayment(instance, dto);
  }

  @Post('send/location-button')
  @HttpCode(200)
  @ApiReply(SCHEMAS.SentMessage, { examples: SEND_LOCATION_BUTTON_EXAMPLES })
  locationButton(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendLocationButtonDto) {
    return this.sends.sendLocationButton(instance, dto);
  }
}
