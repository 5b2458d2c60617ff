import { Body, Controller, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { CallService } from './call.service';
import { CallMakeDto, CallRejectDto } from './dto/call.dto';
import { CALL_MADE_EXAMPLE, CALL_REJECTED_EXAMPLE } from './dto/call.examples';
import { CallMadeResponse, CallRejectedResponse } from './dto/call.response';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

/** Calls: `/call/make` rings a contact (no media, as uazapi's), `/call/reject` turns down an incoming call. */
@ApiArea('Calls')
@Controller('call')
@UseGuards(InstanceGuard)
export class CallController {
  constructor(private readonly calls: CallService) {}

  @Post('make')
  @HttpCode(HttpStatus.OK)
  @ApiReply(CallMadeResponse, {
    description: "The contact's phone rings (for call_duration seconds when given); nobody hears anything if it is answered",
    example: CALL_MADE_EXAMPLE,
    errors: ['invalid_request', 'invalid_token', 'not_found', 'conflict', 'whatsapp_refused', 'timeout', 'internal'],
  })
  @ApiOperation({
    summary: 'Start a voice call',
    description:
      "Rings a WhatsApp contact (`number`). The call carries no audio: the contact's phone rings, and if they answer neither side hears anything. It only starts the call.",
  })
  make(@CurrentInstance() instance: RequestInstance, @Body() dto: CallMakeDto): Promise<CallMadeResponse> {
    return this.calls.make(instance, dto);
  }

  @Post('reject')
  @HttpCode(HttpStatus.OK)
  @ApiReply(CallRejectedResponse, {
    example: CALL_REJECTED_EXAMPLE,
    errors: ['invalid_request', 'invalid_token', 'not_found', 'conflict', 'whatsapp_refused', 'timeout', 'internal'],
  })
  @ApiOperation({
    summary: 'Reject an incoming call',
    description: 'Turns down an incoming call; `number` and `id` choose which one, and an empty body `{}` rejects the current one.',
  })
  reject(@CurrentInstance() instance: RequestInstance, @Body() dto: CallRejectDto): Promise<CallRejectedResponse> {
    return this.calls.reject(instance, dto);
  }
}
