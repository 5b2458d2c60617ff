import { Body, Controller, Get, HttpCode, HttpStatus, Post, Res, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import type { FastifyReply } from 'fastify';
import { AdminGuard, CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { GlobalWebhookDto, WebhookDto } from './dto/webhook.dto';
import { WebhookService } from './webhook.service';
import { WEBHOOK_ERROR_EXAMPLE, WEBHOOK_EXAMPLE } from '../openapi/examples';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';

@Controller('webhook')
@UseGuards(InstanceGuard)
export class WebhookController {
  constructor(private readonly webhooks: WebhookService) {}

  @Get()
  @ApiReply(SCHEMAS.Webhook, { isArray: true, example: [WEBHOOK_EXAMPLE] })
  list(@CurrentInstance() instance: InstanceEntity) {
    return this.webhooks.list(instance.id);
  }

  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Webhook, {
    isArray: true,
    description: "The instance's webhooks after the change (the secret shown once, on the one created or given a new secret)",
    example: [{ ...WEBHOOK_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }],
  })
  configure(@CurrentInstance() instance: InstanceEntity, @Body() dto: WebhookDto) {
    return this.webhooks.configure(instance.id, dto);
  }

  @Get('errors')
  @ApiReply(SCHEMAS.WebhookError, { isArray: true, example: [WEBHOOK_ERROR_EXAMPLE] })
  errors(@CurrentInstance() instance: InstanceEntity) {
    return this.webhooks.errors({ instanceId: instance.id });
  }
}

@Controller('globalwebhook')
@UseGuards(AdminGuard)
export class GlobalWebhookController {
  private readonly captureStartedAt = new Date().toISOString();

  constructor(private readonly webhooks: WebhookService) {}

  @Get()
  @ApiReply(SCHEMAS.Webhook, { example: { ...WEBHOOK_EXAMPLE, events: ['messages', 'connection'] } })
  get() {
    return this.webhooks.globalWebhook();
  }

  @Post()
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Webhook, { example: { ...WEBHOOK_EXAMPLE, events: ['messages', 'connection'] } })
  configure(@Body() dto: GlobalWebhookDto) {
    return this.webhooks.configureGlobal(dto);
  }

  @Get('errors')
  @ApiReply(SCHEMAS.WebhookError, { isArray: true, example: [{ ...WEBHOOK_ERROR_EXAMPLE, type: 'global' }] })
  async errors(@Res({ passthrough: true }) reply: FastifyReply) {
    void reply.header('X-Webhook-Error-Capture-Started-At', this.captureStartedAt);
    return this.webhooks.errors({ global: true });
  }
}
