import { Audited } from '../audit/audited.decorator';
import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Put, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { CHATWOOT_CONFIG_EXAMPLE, CHATWOOT_CONFIG_UPDATED_EXAMPLE, CHATWOOT_WEBHOOK_ACCEPTED_EXAMPLE } from './dto/chatwoot.examples';
import { ChatwootConfigResponse, ChatwootConfigUpdatedResponse, ChatwootWebhookAcceptedResponse } from './dto/chatwoot.response';
import { ChatwootWebhookGuard } from './chatwoot-webhook.guard';
import { ChatwootService } from './chatwoot.service';
import { ChatwootConfigDto } from './dto/chatwoot-config.dto';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation, ApiParam } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

/** The instance's Chatwoot bridge settings (uazapiGO's beta `GET|PUT /chatwoot/config`). */
@ApiArea('Chatwoot')
@Controller('chatwoot/config')
@UseGuards(InstanceGuard)
export class ChatwootConfigController {
  constructor(private readonly chatwoot: ChatwootService) {}

  @Get()
  @ApiReply(ChatwootConfigResponse, { example: CHATWOOT_CONFIG_EXAMPLE })
  @ApiOperation({
    summary: 'Show the Chatwoot configuration',
    description:
      "The instance's Chatwoot integration (beta): whether it is enabled, the Chatwoot URL, account, inbox and its options, to check before changing them.",
  })
  get(@CurrentInstance() instance: RequestInstance): Promise<ChatwootConfigResponse> {
    return this.chatwoot.config(instance.id);
  }

  @Audited('chatwoot.configure')
  @Put()
  @ApiReply(ChatwootConfigUpdatedResponse, { example: CHATWOOT_CONFIG_UPDATED_EXAMPLE })
  @ApiOperation({
    summary: 'Update the Chatwoot configuration',
    description:
      "Sets the instance's Chatwoot integration (beta): URL, account, access token, inbox and options. When enabled, new messages go both ways between WhatsApp and Chatwoot and contacts are kept in sync; the answer gives the webhook URL to set in the Chatwoot inbox.",
  })
  put(@CurrentInstance() instance: RequestInstance, @Body() dto: ChatwootConfigDto): Promise<ChatwootConfigUpdatedResponse> {
    return this.chatwoot.configure(instance.id, dto);
  }
}

/** Chatwoot's inbox webhooks; no token: the unguessable URL (from `PUT /chatwoot/config`) is the credential. */
@ApiArea('Chatwoot')
@Controller('chatwoot/webhook')
@UseGuards(ChatwootWebhookGuard)
export class ChatwootWebhookController {
  constructor(private readonly chatwoot: ChatwootService) {}

  @Post(':instance/:secret')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ChatwootWebhookAcceptedResponse, {
    example: CHATWOOT_WEBHOOK_ACCEPTED_EXAMPLE,
    description: 'Taken: what it asks for is stored and done in the background (a redelivery queues nothing)',
    errors: ['invalid_request', 'not_found', 'payload_too_large', 'unsupported_media_type', 'rate_limited', 'internal'],
  })
  @ApiOperation({
    summary: "Chatwoot's inbox webhook",
    description:
      "Where Chatwoot sends what agents write, to be delivered on WhatsApp. No token: the unguessable URL given by `PUT /chatwoot/config` is the credential. Not in uazapiGO's document.",
  })
  @ApiParam({ name: 'instance', description: "The instance's id" })
  @ApiParam({ name: 'secret', description: "The webhook's secret, part of the URL `PUT /chatwoot/config` answered" })
  receive(@Param('instance') instanceId: string, @Body() body: Record<string, unknown>): Promise<ChatwootWebhookAcceptedResponse> {
    return this.chatwoot.receive(instanceId, body);
  }
}
