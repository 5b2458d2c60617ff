import { Audited } from '../audit/audited.decorator';
import { Body, Controller, Get, HttpCode, HttpStatus, Post, Res, UseGuards } from '@nestjs/common';

import type { FastifyReply } from 'fastify';
import { AdminGuard, CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { GlobalWebhookDto, WebhookDto } from './dto/webhook.dto';
import { WebhookService } from './webhook.service';
import { WebhookErrorResponse } from '../common/dto/webhook-error.response';
import { GLOBAL_WEBHOOK_ERROR_EXAMPLE, GLOBAL_WEBHOOK_EXAMPLE, WEBHOOK_CONFIGURED_EXAMPLE, WEBHOOK_EXAMPLE } from './dto/webhook.examples';
import { WebhookResponse } from './dto/webhook.response';
import { WEBHOOK_ERROR_EXAMPLE } from '../common/dto/common.examples';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

@ApiArea('Webhooks & SSE')
@Controller('webhook')
@UseGuards(InstanceGuard)
export class WebhookController {
  constructor(private readonly webhooks: WebhookService) {}

  @Get()
  @ApiReply(WebhookResponse, { isArray: true, example: [WEBHOOK_EXAMPLE] })
  @ApiOperation({
    summary: "Show the instance's webhooks",
    description:
      "The instance's webhooks: for each, its id, whether it is enabled, its URL, the `events` it receives, the `excludeMessages` filters and the `addUrlEvents` / `addUrlTypesMessages` options.",
  })
  list(@CurrentInstance() instance: RequestInstance): Promise<WebhookResponse[]> {
    return this.webhooks.list(instance.id);
  }

  @Audited('webhook.configure')
  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiReply(WebhookResponse, {
    isArray: true,
    description: "The instance's webhooks after the change (the secret shown once, on the one created or given a new secret)",
    example: WEBHOOK_CONFIGURED_EXAMPLE,
  })
  @ApiOperation({
    summary: "Configure the instance's webhooks",
    description:
      'Simple mode (recommended): send no `action` nor `id`, and the instance\'s one webhook is created or updated. Advanced mode: `action` `add`, `update` (with `id`) or `delete` (with `id`) manages several webhooks. Each receives the `events` listed, except the messages `excludeMessages` filters out; `excludeMessages: ["wasSentByApi"]` avoids loops when your system answers through the API.',
  })
  configure(@CurrentInstance() instance: RequestInstance, @Body() dto: WebhookDto): Promise<WebhookResponse[]> {
    return this.webhooks.configure(instance.id, dto);
  }

  @Get('errors')
  @ApiReply(WebhookErrorResponse, { isArray: true, example: [WEBHOOK_ERROR_EXAMPLE] })
  @ApiOperation({
    summary: "Show the webhooks' latest delivery errors",
    description:
      "The last 20 failed deliveries of this instance's webhooks: when, URL, event, the payload tried, the attempts, the final HTTP status when there was one and the error. Stored by the gateway: a restart keeps them.",
  })
  errors(@CurrentInstance() instance: RequestInstance): Promise<WebhookErrorResponse[]> {
    return this.webhooks.errors({ instanceId: instance.id });
  }
}

@ApiArea('Admin')
@Controller('globalwebhook')
@UseGuards(AdminGuard)
export class GlobalWebhookController {
  private readonly captureStartedAt = new Date().toISOString();

  constructor(private readonly webhooks: WebhookService) {}

  @Get()
  @ApiReply(WebhookResponse, { example: GLOBAL_WEBHOOK_EXAMPLE })
  @ApiOperation({
    summary: 'Show the global webhook',
    description: 'The global webhook, which receives the events of every instance: URL, `events`, `excludeMessages` filters and options.',
  })
  get(): Promise<WebhookResponse> {
    return this.webhooks.globalWebhook();
  }

  @Audited('globalwebhook.configure')
  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiReply(WebhookResponse, { example: GLOBAL_WEBHOOK_EXAMPLE })
  @ApiOperation({
    summary: 'Configure the global webhook',
    description:
      'Sets the webhook that receives the events of every instance: its `url`, the `events` and the `excludeMessages` filters (`["wasSentByApi"]` recommended to avoid loops).',
  })
  configure(@Body() dto: GlobalWebhookDto): Promise<WebhookResponse> {
    return this.webhooks.configureGlobal(dto);
  }

  @Get('all')
  @ApiReply(WebhookResponse, { isArray: true, example: [GLOBAL_WEBHOOK_EXAMPLE] })
  @ApiOperation({
    summary: 'List the global webhook',
    description:
      'The global webhook as a list: one entry when it is set, an empty list when not (where `GET /globalwebhook` answers 404, as the reference does).',
  })
  all(): Promise<WebhookResponse[]> {
    return this.webhooks.globalWebhooks();
  }

  @Get('errors')
  @ApiReply(WebhookErrorResponse, { isArray: true, example: [GLOBAL_WEBHOOK_ERROR_EXAMPLE] })
  @ApiOperation({
    summary: "Show the global webhook's latest delivery errors",
    description:
      'The last 20 failed deliveries of the global webhook: when, URL, event, the payload tried, the attempts, the final HTTP status and the error. Stored by the gateway: a restart keeps them.',
  })
  async errors(@Res({ passthrough: true }) reply: FastifyReply): Promise<WebhookErrorResponse[]> {
    void reply.header('X-Webhook-Error-Capture-Started-At', this.captureStartedAt);
    return this.webhooks.errors({ global: true });
  }
}
