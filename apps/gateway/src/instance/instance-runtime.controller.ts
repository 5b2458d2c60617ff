import { Audited } from '../audit/audited.decorator';
import { Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import {
  HISTORY_SYNC_STATUS_EXAMPLE,
  INSTANCE_RESET_COOLDOWN_EXAMPLE,
  INSTANCE_RESET_IN_PROGRESS_EXAMPLE,
  INSTANCE_RESET_STARTED_EXAMPLE,
  WA_MESSAGE_LIMITS_EXAMPLE,
} from './dto/instance.examples';
import { HistorySyncStatusResponse, InstanceResetResponse, WaMessageLimitsResponse } from './dto/instance.response';
import { InstanceRuntimeService } from './instance-runtime.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

/** The instance's runtime: reset, WhatsApp's new-chat limits and the pairing's history sync. */
@ApiArea('Instance')
@Controller('instance')
@UseGuards(InstanceGuard)
export class InstanceRuntimeController {
  constructor(private readonly runtime: InstanceRuntimeService) {}

  @Audited('instance.reset')
  @Post('reset')
  @HttpCode(HttpStatus.OK)
  @ApiReply(InstanceResetResponse, {
    examples: {
      started: { summary: 'Reset started', value: INSTANCE_RESET_STARTED_EXAMPLE },
      inProgress: { summary: 'A reset is still reconnecting', value: INSTANCE_RESET_IN_PROGRESS_EXAMPLE },
      cooldown: { summary: 'Too soon after the last reset', value: INSTANCE_RESET_COOLDOWN_EXAMPLE },
    },
    errors: ['invalid_token', 'forbidden', 'conflict', 'unavailable', 'timeout', 'internal'],
  })
  @ApiOperation({
    summary: "Reset the instance's runtime",
    description:
      "Asks for a controlled restart of this instance's session without deleting it, when it is stuck or its sends do not progress. The answer says whether a reset started, one is already running, or the cooldown since the last one is still active.",
  })
  reset(@CurrentInstance() instance: RequestInstance): Promise<InstanceResetResponse> {
    return this.runtime.reset(instance);
  }

  @Get('wa_messages_limits')
  @ApiReply(WaMessageLimitsResponse, {
    example: WA_MESSAGE_LIMITS_EXAMPLE,
    errors: ['invalid_token', 'conflict', 'timeout', 'internal'],
  })
  @ApiOperation({
    summary: "Show WhatsApp's limits on new conversations",
    description:
      'Asks WhatsApp whether the connected account may start new conversations now: the new-chat message capping (quota used and total) and the reach-out time lock. Useful to explain sends refused with `provider_code: 463` and before campaigns.',
  })
  messageLimits(@CurrentInstance() instance: RequestInstance): Promise<WaMessageLimitsResponse> {
    return this.runtime.messageLimits(instance);
  }

  @Get('history-sync/status')
  @ApiReply(HistorySyncStatusResponse, {
    example: HISTORY_SYNC_STATUS_EXAMPLE,
    errors: ['invalid_token', 'internal'],
  })
  @ApiOperation({
    summary: 'Show the history sync of the pairing',
    description:
      'How far the history WhatsApp sends after pairing has arrived: status, batches, counts of chats, contacts and messages, progress and the times of the first and last batch. Not in uazapiGO.',
  })
  historySyncStatus(@CurrentInstance() instance: RequestInstance): Promise<HistorySyncStatusResponse> {
    return this.runtime.historySyncStatus(instance);
  }
}
