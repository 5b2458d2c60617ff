import { Body, Controller, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { CallService } from './call.service';
import { CallMakeDto, CallRejectDto } from './dto/call.dto';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';

/** Calls: `/call/make` rings a contact (no media, as uazapi's), `/call/reject` turns down an incoming call. */
@ApiArea('Calls')
@Controller('call')
@UseGuards(InstanceGuard)
export class CallController {
  constructor(private readonly calls: CallService) {}

  @Post('make')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CallMade, {
    description: "The contact's phone rings (for call_duration seconds when given); nobody hears anything if it is answered",
    example: { response: 'Call successful', callId: '3EB0C4A1F2B7D6E8A9C0B1D2E3F4A5B6', number: '5511999999999@s.whatsapp.net', call_duration: 15 },
    errors: ['invalid_request', 'invalid_token', 'not_found', 'conflict', 'whatsapp_refused', 'timeout', 'internal'],
  })
  @ApiOperation({
    summary: 'Start a voice call',
    description:
      "Rings a WhatsApp contact (`number`). The call carries no audio: the contact's phone rings, and if they answer neither side hears anything. It only starts the call.",
  })
  make(@CurrentInstance() instance: InstanceEntity, @Body() dto: CallMakeDto) {
    return this.calls.make(instance, dto);
  }

  @Post('reject')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.CallRejected, {
    example: { response: 'Call rejected', id: 'ABEiGmo8oqkAcAKrBYQAAAAA_1', number: '5511999999999@s.whatsapp.net' },
    errors: ['invalid_request', 'invalid_token', 'not_found', 'conflict', 'whatsapp_refused', 'timeout', 'internal'],
  })
  @ApiOperation({
    summary: 'Reject an incoming call',
    description: 'Turns down an incoming call; `number` and `id` choose which one, and an empty body `{}` rejects the current one.',
  })
  reject(@CurrentInstance() instance: InstanceEntity, @Body() dto: CallRejectDto) {
    return this.calls.reject(instance, dto);
  }
}
