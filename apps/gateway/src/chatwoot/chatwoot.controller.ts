import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Put, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { CHATWOOT_CONFIG_EXAMPLE, CHATWOOT_CONFIG_UPDATED_EXAMPLE } from './chatwoot.examples';
import { ChatwootWebhookGuard } from './chatwoot-webhook.guard';
import { ChatwootService } from './chatwoot.service';
import { ChatwootConfigDto } from './dto/chatwoot-config.dto';

/** The instance's Chatwoot bridge settings (uazapiGO's beta `GET|PUT /chatwoot/config`). */
@Controller('chatwoot/config')
@UseGuards(InstanceGuard)
export class ChatwootConfigController {
  constructor(private readonly chatwoot: ChatwootService) {}

  @Get()
  @ApiReply(SCHEMAS.ChatwootConfig, { example: CHATWOOT_CONFIG_EXAMPLE })
  get(@CurrentInstance() instance: InstanceEntity) {
    return this.chatwoot.config(instance.id);
  }

  @Put()
  @ApiReply(SCHEMAS.ChatwootConfigUpdated, { example: CHATWOOT_CONFIG_UPDATED_EXAMPLE })
  put(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatwootConfigDto) {
    return this.chatwoot.configure(instance.id, dto);
  }
}

/** Chatwoot's inbox webhooks; no token: the unguessable URL (from `PUT /chatwoot/config`) is the credential. */
@Controller('chatwoot/webhook')
@UseGuards(ChatwootWebhookGuard)
export class ChatwootWebhookController {
  constructor(private readonly chatwoot: ChatwootService) {}

  @Post(':instance/:secret')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.ChatwootWebhookAccepted, {
    example: { received: true, queued: 1 },
    description: 'Taken: what it asks for is stored and done in the background (a redelivery queues nothing)',
    errors: ['invalid_request', 'not_found', 'payload_too_large', 'unsupported_media_type', 'rate_limited', 'internal'],
  })
  receive(@Param('instance') instanceId: string, @Body() body: Record<string, unknown>) {
    return this.chatwoot.receive(instanceId, body);
  }
}
