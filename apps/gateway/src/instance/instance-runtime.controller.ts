import { Audited } from '../audit/audited.decorator';
import { Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { InstanceRuntimeService } from './instance-runtime.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';

/** The instance's runtime: reset, WhatsApp's new-chat limits and the pairing's history sync. */
@ApiArea('Instance')
@Controller('instance')
@UseGuards(InstanceGuard)
export class InstanceRuntimeController {
  constructor(private readonly runtime: InstanceRuntimeService) {}

  @Audited('instance.reset')
  @Post('reset')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.InstanceReset, {
    examples: {
      started: {
        summary: 'Reset started',
        value: { response: 'Instance reset started', resetting: true, instanceId: 'r183e2ef9597845', queuedRecoveryAttempted: true },
      },
      inProgress: {
        summary: 'A reset is still reconnecting',
        value: { response: 'Instance reset already in progress', resetting: true, instanceId: 'r183e2ef9597845', queuedRecoveryAttempted: false },
      },
      cooldown: {
        summary: 'Too soon after the last reset',
        value: { response: 'Instance reset cooldown active (8s remaining)', resetting: false, instanceId: 'r183e2ef9597845', queuedRecoveryAttempted: false },
      },
    },
    errors: ['invalid_token', 'forbidden', 'conflict', 'unavailable', 'timeout', 'internal'],
  })
  @ApiOperation({
    summary: "Reset the instance's runtime",
    description:
      "Asks for a controlled restart of this instance's session without deleting it, when it is stuck or its sends do not progress. The answer says whether a reset started, one is already running, or the cooldown since the last one is still active.",
  })
  reset(@CurrentInstance() instance: InstanceEntity) {
    return this.runtime.reset(instance);
  }

  @Get('wa_messages_limits')
  @ApiReply(SCHEMAS.WaMessageLimits, {
    example: {
      provider: 'whatsapp',
      reachable: true,
      can_send_new_messages: true,
      message: 'No WhatsApp restriction for starting new conversations was detected for the currently connected account.',
      message_ptbr: 'Nenhuma restrição de envio de novas conversas foi identificada no WhatsApp para a conta atualmente conectada.',
      diagnostics_endpoint: '/instance/wa_messages_limits',
      new_chat_message_capping: { available: true, status: 'NONE', used_quota: 3, total_quota: 1000, ote_status: 'NOT_ELIGIBLE', mv_status: 'NOT_ACTIVE' },
      reachout_timelock: { available: true, active: false, enforcement_type: 'DEFAULT' },
    },
    errors: ['invalid_token', 'conflict', 'timeout', 'internal'],
  })
  @ApiOperation({
    summary: "Show WhatsApp's limits on new conversations",
    description:
      'Asks WhatsApp whether the connected account may start new conversations now: the new-chat message capping (quota used and total) and the reach-out time lock. Useful to explain sends refused with `provider_code: 463` and before campaigns.',
  })
  messageLimits(@CurrentInstance() instance: InstanceEntity) {
    return this.runtime.messageLimits(instance);
  }

  @Get('history-sync/status')
  @ApiReply(SCHEMAS.HistorySyncStatus, {
    example: {
      instanceId: 'r183e2ef9597845',
      request_id: 'req_01HQ5Z8K3M',
      paired: true,
      connected: true,
      history_days: 90,
      full_sync: false,
      status: 'completed',
      batches: 2,
      counts: { chats: 14, contacts: 30, messages: 412 },
      progress: 100,
      isLatest: true,
      first_batch_at: '2026-11-24T12:00:03.000Z',
      last_batch_at: '2026-11-24T12:00:09.000Z',
    },
    errors: ['invalid_token', 'internal'],
  })
  @ApiOperation({
    summary: 'Show the history sync of the pairing',
    description:
      'How far the history WhatsApp sends after pairing has arrived: status, batches, counts of chats, contacts and messages, progress and the times of the first and last batch. Not in uazapiGO.',
  })
  historySyncStatus(@CurrentInstance() instance: InstanceEntity) {
    return this.runtime.historySyncStatus(instance);
  }
}
