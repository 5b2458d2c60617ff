import { Audited } from '../audit/audited.decorator';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import { AdminGuard, CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { KAFKA_SINK_EXAMPLE, NATS_SINK_EXAMPLE, RABBITMQ_SINK_EXAMPLE, WEBHOOK_ERROR_EXAMPLE } from '../openapi/examples';
import { ReplyResponse } from '../common/dto/reply.response';
import { WebhookErrorResponse } from '../common/dto/webhook-error.response';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import { GlobalKafkaSinkDto, GlobalNatsSinkDto, GlobalRabbitMqSinkDto, KafkaSinkDto, NatsSinkDto, RabbitMqSinkDto } from './dto/sink.dto';
import { SinkService } from './sink.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';

const SINK_ERROR_EXAMPLE = {
  ...WEBHOOK_ERROR_EXAMPLE,
  url: 'amqp://wa:***@rabbit.example:5672/ exchange=wa-gateway routingKey=r1a2b3c4d5e6f7a.messages',
  status_code: 0,
  error: 'connecting: ECONNREFUSED: connect ECONNREFUSED 203.0.113.10:5672',
};
const LIST = 'The sinks of this kind after the change (the broker URL with its password masked)';
const GLOBAL = { ...RABBITMQ_SINK_EXAMPLE, source: 'api' };

/** An instance's event sinks, one route per broker (`/webhook` style; same events and excludeMessages filters). */
@ApiArea('Event sinks')
@Controller('sink')
@UseGuards(InstanceGuard)
export class SinkController {
  constructor(private readonly sinks: SinkService) {}

  @Get('rabbitmq')
  @ApiReply(SCHEMAS.Sink, { isArray: true, example: [RABBITMQ_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Show the instance's RabbitMQ sinks",
    description:
      "The instance's RabbitMQ sinks: broker URL (without its password), exchange, routing key, and the `events` and `excludeMessages` filters, as a webhook's.",
  })
  listRabbitMq(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.list('rabbitmq', instance.id);
  }

  @Audited('sink.rabbitmq.configure')
  @Post('rabbitmq')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { isArray: true, description: LIST, example: [RABBITMQ_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Configure the instance's RabbitMQ sinks",
    description:
      "Publishes the instance's events to a RabbitMQ exchange, filtered by `events` and `excludeMessages` as a webhook; managed like `/webhook` (simple mode, or `action` add, update or delete with an `id`).",
  })
  configureRabbitMq(@CurrentInstance() instance: InstanceEntity, @Body() dto: RabbitMqSinkDto) {
    return this.sinks.configure('rabbitmq', instance.id, dto);
  }

  @Get('rabbitmq/errors')
  @ApiReply(WebhookErrorResponse, { isArray: true, example: [SINK_ERROR_EXAMPLE] })
  @ApiOperation({
    summary: "Show the RabbitMQ sinks' latest errors",
    description: "The latest failed publications of this instance's RabbitMQ sinks (the last 20), with the target, event, attempts and error.",
  })
  rabbitMqErrors(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.errors('rabbitmq', { instanceId: instance.id });
  }

  @Get('nats')
  @ApiReply(SCHEMAS.Sink, { isArray: true, example: [NATS_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Show the instance's NATS sinks",
    description:
      "The instance's NATS sinks: server URL (without its credentials), subject prefix or JetStream stream, and the `events` and `excludeMessages` filters.",
  })
  listNats(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.list('nats', instance.id);
  }

  @Audited('sink.nats.configure')
  @Post('nats')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { isArray: true, description: LIST, example: [NATS_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Configure the instance's NATS sinks",
    description:
      "Publishes the instance's events to NATS subjects under a prefix (optionally into a JetStream stream), filtered by `events` and `excludeMessages`; managed like `/webhook`.",
  })
  configureNats(@CurrentInstance() instance: InstanceEntity, @Body() dto: NatsSinkDto) {
    return this.sinks.configure('nats', instance.id, dto);
  }

  @Get('nats/errors')
  @ApiReply(WebhookErrorResponse, {
    isArray: true,
    example: [{ ...SINK_ERROR_EXAMPLE, url: 'nats://nats.example:4222 subject=wa-gateway.events.r1a2b3c4d5e6f7a.messages' }],
  })
  @ApiOperation({
    summary: "Show the NATS sinks' latest errors",
    description: "The latest failed publications of this instance's NATS sinks (the last 20), with the target, event, attempts and error.",
  })
  natsErrors(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.errors('nats', { instanceId: instance.id });
  }

  @Get('kafka')
  @ApiReply(SCHEMAS.Sink, { isArray: true, example: [KAFKA_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Show the instance's Kafka sinks",
    description: "The instance's Kafka sinks: brokers, topic, and the `events` and `excludeMessages` filters.",
  })
  listKafka(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.list('kafka', instance.id);
  }

  @Audited('sink.kafka.configure')
  @Post('kafka')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { isArray: true, description: LIST, example: [KAFKA_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Configure the instance's Kafka sinks",
    description: "Publishes the instance's events to a Kafka topic, filtered by `events` and `excludeMessages`; managed like `/webhook`.",
  })
  configureKafka(@CurrentInstance() instance: InstanceEntity, @Body() dto: KafkaSinkDto) {
    return this.sinks.configure('kafka', instance.id, dto);
  }

  @Get('kafka/errors')
  @ApiReply(WebhookErrorResponse, {
    isArray: true,
    example: [{ ...SINK_ERROR_EXAMPLE, url: 'kafka://k1.example:9092,k2.example:9092 topic=wa-gateway-events' }],
  })
  @ApiOperation({
    summary: "Show the Kafka sinks' latest errors",
    description: "The latest failed publications of this instance's Kafka sinks (the last 20), with the target, event, attempts and error.",
  })
  kafkaErrors(@CurrentInstance() instance: InstanceEntity) {
    return this.sinks.errors('kafka', { instanceId: instance.id });
  }
}

/** The global sink of each broker (every instance's events), `/globalwebhook` style; env may name it too (RABBITMQ_URL…). */
@ApiArea('Event sinks')
@Controller('globalsink')
@UseGuards(AdminGuard)
export class GlobalSinkController {
  constructor(private readonly sinks: SinkService) {}

  @Get()
  @ApiReply(SCHEMAS.Sink, { isArray: true, example: [GLOBAL] })
  @ApiOperation({
    summary: 'List the global sinks',
    description:
      'Every global sink (at most one per broker: RabbitMQ, NATS, Kafka), set here or by the environment; an empty list when none is set (where `GET /globalsink/{kind}` answers 404).',
  })
  list() {
    return this.sinks.globalSinks();
  }

  @Get('rabbitmq')
  @ApiReply(SCHEMAS.Sink, { example: GLOBAL })
  @ApiOperation({
    summary: 'Show the global RabbitMQ sink',
    description: "The RabbitMQ sink that receives every instance's events (set here or by the environment, e.g. `RABBITMQ_URL`).",
  })
  rabbitMq() {
    return this.sinks.globalSink('rabbitmq');
  }

  @Audited('globalsink.rabbitmq.configure')
  @Post('rabbitmq')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { example: GLOBAL })
  @ApiOperation({
    summary: 'Configure the global RabbitMQ sink',
    description: "Publishes every instance's events to a RabbitMQ exchange, filtered by `events` and `excludeMessages`.",
  })
  configureRabbitMq(@Body() dto: GlobalRabbitMqSinkDto) {
    return this.sinks.configureGlobal('rabbitmq', dto);
  }

  @Audited('globalsink.rabbitmq.delete')
  @Delete('rabbitmq')
  @ApiReply(ReplyResponse, { example: { response: 'Global RabbitMQ sink deleted' } })
  @ApiOperation({ summary: 'Remove the global RabbitMQ sink', description: "Stops publishing every instance's events to RabbitMQ." })
  deleteRabbitMq() {
    return this.sinks.deleteGlobal('rabbitmq');
  }

  @Get('rabbitmq/errors')
  @ApiReply(WebhookErrorResponse, { isArray: true, example: [{ ...SINK_ERROR_EXAMPLE, type: 'global' }] })
  @ApiOperation({
    summary: "Show the global RabbitMQ sink's latest errors",
    description: 'The latest failed publications of the global RabbitMQ sink (the last 20), with the target, event, attempts and error.',
  })
  rabbitMqErrors() {
    return this.sinks.errors('rabbitmq', { global: true });
  }

  @Get('nats')
  @ApiReply(SCHEMAS.Sink, { example: { ...NATS_SINK_EXAMPLE, source: 'env' } })
  @ApiOperation({ summary: 'Show the global NATS sink', description: "The NATS sink that receives every instance's events (set here or by the environment)." })
  nats() {
    return this.sinks.globalSink('nats');
  }

  @Audited('globalsink.nats.configure')
  @Post('nats')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { example: { ...NATS_SINK_EXAMPLE, source: 'api' } })
  @ApiOperation({
    summary: 'Configure the global NATS sink',
    description:
      "Publishes every instance's events to NATS subjects under a prefix (optionally a JetStream stream), filtered by `events` and `excludeMessages`.",
  })
  configureNats(@Body() dto: GlobalNatsSinkDto) {
    return this.sinks.configureGlobal('nats', dto);
  }

  @Audited('globalsink.nats.delete')
  @Delete('nats')
  @ApiReply(ReplyResponse, { example: { response: 'Global NATS sink deleted' } })
  @ApiOperation({ summary: 'Remove the global NATS sink', description: "Stops publishing every instance's events to NATS." })
  deleteNats() {
    return this.sinks.deleteGlobal('nats');
  }

  @Get('nats/errors')
  @ApiReply(WebhookErrorResponse, { isArray: true, example: [{ ...SINK_ERROR_EXAMPLE, type: 'global' }] })
  @ApiOperation({
    summary: "Show the global NATS sink's latest errors",
    description: 'The latest failed publications of the global NATS sink (the last 20), with the target, event, attempts and error.',
  })
  natsErrors() {
    return this.sinks.errors('nats', { global: true });
  }

  @Get('kafka')
  @ApiReply(SCHEMAS.Sink, { example: { ...KAFKA_SINK_EXAMPLE, source: 'env' } })
  @ApiOperation({
    summary: 'Show the global Kafka sink',
    description: "The Kafka sink that receives every instance's events (set here or by the environment).",
  })
  kafka() {
    return this.sinks.globalSink('kafka');
  }

  @Audited('globalsink.kafka.configure')
  @Post('kafka')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.Sink, { example: { ...KAFKA_SINK_EXAMPLE, source: 'api' } })
  @ApiOperation({
    summary: 'Configure the global Kafka sink',
    description: "Publishes every instance's events to a Kafka topic, filtered by `events` and `excludeMessages`.",
  })
  configureKafka(@Body() dto: GlobalKafkaSinkDto) {
    return this.sinks.configureGlobal('kafka', dto);
  }

  @Audited('globalsink.kafka.delete')
  @Delete('kafka')
  @ApiReply(ReplyResponse, { example: { response: 'Global Kafka sink deleted' } })
  @ApiOperation({ summary: 'Remove the global Kafka sink', description: "Stops publishing every instance's events to Kafka." })
  deleteKafka() {
    return this.sinks.deleteGlobal('kafka');
  }

  @Get('kafka/errors')
  @ApiReply(WebhookErrorResponse, { isArray: true, example: [{ ...SINK_ERROR_EXAMPLE, type: 'global' }] })
  @ApiOperation({
    summary: "Show the global Kafka sink's latest errors",
    description: 'The latest failed publications of the global Kafka sink (the last 20), with the target, event, attempts and error.',
  })
  kafkaErrors() {
    return this.sinks.errors('kafka', { global: true });
  }
}
