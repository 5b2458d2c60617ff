import { Body, Controller, Get, HttpCode, HttpStatus, Post, Res, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import type { FastifyReply } from 'fastify';
import { AdminGuard, CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { GlobalWebhookDto, WebhookDto } from './dto/webhook.dto';
import { WebhookService } from './webhook.service';

@Controller('webhook')
@UseGuards(InstanceGuard)
export class WebhookController {
  constructor(private readonly webhooks: WebhookService) {}

  @Get()
  list(@CurrentInstance() instance: InstanceEntity) {
    return this.webhooks.list(instance.id);
  }

  @Post()
  @HttpCode(HttpStatus.OK)
  configure(@CurrentInstance() instance: InstanceEntity, @Body() dto: WebhookDto) {
    return this.webhooks.configure(instance.id, dto);
  }

  @Get('errors')
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
  get() {
    return this.webhooks.globalWebhook();
  }

  @Post()
  @HttpCode(HttpStatus.OK)
  configure(@Body() dto: GlobalWebhookDto) {
    return this.webhooks.configureGlobal(dto);
  }

  @Get('errors')
  async errors(@Res({ passthrough: true }) reply: FastifyReply) {
    void reply.header('X-Webhook-Error-Capture-Started-At', this.captureStartedAt);
    return this.webhooks.errors({ global: true });
  }
}
