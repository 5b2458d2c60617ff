import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { AdminGuard, CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { KAFKA_SINK_EXAMPLE, NATS_SINK_EXAMPLE, RABBITMQ_SINK_EXAMPLE, WEBHOOK_ERROR_EXAMPLE } from '../openapi/examples';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { GlobalKafkaSinkDto, GlobalNatsSinkDto, GlobalRabbitMqSinkDto, KafkaSinkDto, NatsSinkDto, RabbitMqSinkDto } from './dto/sink.dto';
import { SinkService } from './sink.service';

const SINK_ERROR_EXAMPLE = {
  ...WEBHOOK_ERROR_EXAMPLE,
  url: 'amqp://wa:***@rabbit.example:5672/ exchange=wa-gateway routingKey=r1a2b3c4d5e6f7a.messages',
  status_code: 0,
  error: 'connecting: ECONNREFUSED: connect ECONNREFUSED 203.0.113.10:5672',
};
const LIST = 'The sinks of this kind after the change (the broker URL with its password masked)';
const GLOBAL = { ...RABBITMQ_SINK_EXAMPLE, source: 'api' };

/** An instance's event sinks, one route per broker (`/webhook` style; same events and excludeMessages filters). */
@Controller('sink')
@UseGuards(InstanceGuard)
export class SinkController {
  constructor(private readonly sinks: SinkService) {}

  @Get('rabbitmq')
  @ApiReply(SCHEMAS.Sink, { isArray: true, example: [RABBITMQ_SINK_EXAMPLE] })
  listRabbitMq(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.list('rabbitmq', instance.id);
  }

  @Post('rabbitmq')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { isArray: true, description: LIST, example: [RABBITMQ_SINK_EXAMPLE] })
  configureRabbitMq(@CurrentInstance() instance: InstanceEntity, @Body() dto: RabbitMqSinkDto) {
    return this.sinks.configure('rabbitmq', instance.id, dto);
  }

  @Get('rabbitmq/errors')
  @ApiReply(SCHEMAS.WebhookError, { isArray: true, example: [SINK_ERROR_EXAMPLE] })
  rabbitMqErrors(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.errors('rabbitmq', { instanceId: instance.id });
  }

  @Get('nats')
  @ApiReply(SCHEMAS.Sink, { isArray: true, example: [NATS_SINK_EXAMPLE] })
  listNats(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.list('nats', instance.id);
  }

  @Post('nats')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { isArray: true, description: LIST, example: [NATS_SINK_EXAMPLE] })
  configureNats(@CurrentInstance() instance: InstanceEntity, @Body() dto: NatsSinkDto) {
    return this.sinks.configure('nats', instance.id, dto);
  }

  @Get('nats/errors')
  @ApiReply(SCHEMAS.WebhookError, {
    isArray: true,
    example: [{ ...SINK_ERROR_EXAMPLE, url: 'nats://nats.example:4222 subject=wa-gateway.events.r1a2b3c4d5e6f7a.messages' }],
  })
  natsErrors(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.errors('nats', { instanceId: instance.id });
  }

  @Get('kafka')
  @ApiReply(SCHEMAS.Sink, { isArray: true, example: [KAFKA_SINK_EXAMPLE] })
  listKafka(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.list('kafka', instance.id);
  }

  @Post('kafka')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { isArray: true, description: LIST, example: [KAFKA_SINK_EXAMPLE] })
  configureKafka(@CurrentInstance() instance: InstanceEntity, @Body() dto: KafkaSinkDto) {
    return this.sinks.configure('kafka', instance.id, dto);
  }

  @Get('kafka/errors')
  @ApiReply(SCHEMAS.WebhookError, {
    isArray: true,
    example: [{ ...SINK_ERROR_EXAMPLE, url: 'kafka://k1.example:9092,k2.example:9092 topic=wa-gateway-events' }],
  })
  kafkaErrors(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.errors('kafka', { instanceId: instance.id });
  }
}

/** The global sink of each broker (every instance's events), `/globalwebhook` style; env may name it too (RABBITMQ_URL…). */
@Controller('globalsink')
@UseGuards(AdminGuard)
export class GlobalSinkController {
  constructor(private readonly sinks: SinkService) {}

  @Get('rabbitmq')
  @ApiReply(SCHEMAS.Sink, { example: GLOBAL })
  rabbitMq() {
    return this.sinks.globalSink('rabbitmq');
  }

  @Post('rabbitmq')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { example: GLOBAL })
  configureRabbitMq(@Body() dto: GlobalRabbitMqSinkDto) {
    return this.sinks.configureGlobal('rabbitmq', dto);
  }

  @Delete('rabbitmq')
  @ApiReply(SCHEMAS.Response, { example: { response: 'Global RabbitMQ sink deleted' } })
  deleteRabbitMq() {
    return this.sinks.deleteGlobal('rabbitmq');
  }

  @Get('rabbitmq/errors')
  @ApiReply(SCHEMAS.WebhookError, { isArray: true, example: [{ ...SINK_ERROR_EXAMPLE, type: 'global' }] })
  rabbitMqErrors() {
    return this.sinks.errors('rabbitmq', { global: true });
  }

  @Get('nats')
  @ApiReply(SCHEMAS.Sink, { example: { ...NATS_SINK_EXAMPLE, source: 'env' } })
  nats() {
    return this.sinks.globalSink('nats');
  }

  @Post('nats')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { example: { ...NATS_SINK_EXAMPLE, source: 'api' } })
  configureNats(@Body() dto: GlobalNatsSinkDto) {
    return this.sinks.configureGlobal('nats', dto);
  }

  @Delete('nats')
  @ApiReply(SCHEMAS.Response, { example: { response: 'Global NATS sink deleted' } })
  deleteNats() {
    return this.sinks.deleteGlobal('nats');
  }

  @Get('nats/errors')
  @ApiReply(SCHEMAS.WebhookError, { isArray: true, example: [{ ...SINK_ERROR_EXAMPLE, type: 'global' }] })
  natsErrors() {
    return this.sinks.errors('nats', { global: true });
  }

  @Get('kafka')
  @ApiReply(SCHEMAS.Sink, { example: { ...KAFKA_SINK_EXAMPLE, source: 'env' } })
  kafka() {
    return this.sinks.globalSink('kafka');
  }

  @Post('kafka')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { example: { ...KAFKA_SINK_EXAMPLE, source: 'api' } })
  configureKafka(@Body() dto: GlobalKafkaSinkDto) {
    return this.sinks.configureGlobal('kafka', dto);
  }

  @Delete('kafka')
  @ApiReply(SCHEMAS.Response, { example: { response: 'Global Kafka sink deleted' } })
  deleteKafka() {
    return this.sinks.deleteGlobal('kafka');
  }

  @Get('kafka/errors')
  @ApiReply(SCHEMAS.WebhookError, { isArray: true, example: [{ ...SINK_ERROR_EXAMPLE, type: 'global' }] })
  kafkaErrors() {
    return this.sinks.errors('kafka', { global: true });
  }
}
