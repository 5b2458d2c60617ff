import { Audited } from '../audit/audited.decorator';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';

import { AdminGuard, CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ReplyResponse } from '../common/dto/reply.response';
import { WebhookErrorResponse } from '../common/dto/webhook-error.response';
import { ApiReply } from '../openapi/api-reply.decorator';
import { GlobalKafkaSinkDto, GlobalNatsSinkDto, GlobalRabbitMqSinkDto, KafkaSinkDto, NatsSinkDto, RabbitMqSinkDto } from './dto/sink.dto';
import {
  ENV_KAFKA_SINK_EXAMPLE,
  ENV_NATS_SINK_EXAMPLE,
  GLOBAL_KAFKA_SINK_DELETED_EXAMPLE,
  GLOBAL_KAFKA_SINK_EXAMPLE,
  GLOBAL_NATS_SINK_DELETED_EXAMPLE,
  GLOBAL_NATS_SINK_EXAMPLE,
  GLOBAL_RABBITMQ_SINK_DELETED_EXAMPLE,
  GLOBAL_RABBITMQ_SINK_EXAMPLE,
  GLOBAL_SINK_ERROR_EXAMPLE,
  KAFKA_SINK_ERROR_EXAMPLE,
  KAFKA_SINK_EXAMPLE,
  NATS_SINK_ERROR_EXAMPLE,
  NATS_SINK_EXAMPLE,
  RABBITMQ_SINK_ERROR_EXAMPLE,
  RABBITMQ_SINK_EXAMPLE,
} from './dto/sink.examples';
import { SinkResponse } from './dto/sink.response';
import { SinkService } from './sink.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

const LIST = 'The sinks of this kind after the change (the broker URL with its password masked)';

/** An instance's event sinks, one route per broker (`/webhook` style; same events and excludeMessages filters). */
@ApiArea('Event sinks')
@Controller('sink')
@UseGuards(InstanceGuard)
export class SinkController {
  constructor(private readonly sinks: SinkService) {}

  @Get('rabbitmq')
  @ApiReply(SinkResponse, { isArray: true, example: [RABBITMQ_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Show the instance's RabbitMQ sinks",
    description:
      "The instance's RabbitMQ sinks: broker URL (without its password), exchange, routing key, and the `events` and `excludeMessages` filters, as a webhook's.",
  })
  listRabbitMq(@CurrentInstance() instance: RequestInstance): Promise<SinkResponse[]> {
    return this.sinks.list('rabbitmq', instance.id);
  }

  @Audited('sink.rabbitmq.configure')
  @Post('rabbitmq')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SinkResponse, { isArray: true, description: LIST, example: [RABBITMQ_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Configure the instance's RabbitMQ sinks",
    description:
      "Publishes the instance's events to a RabbitMQ exchange, filtered by `events` and `excludeMessages` as a webhook; managed like `/webhook` (simple mode, or `action` add, update or delete with an `id`).",
  })
  configureRabbitMq(@CurrentInstance() instance: RequestInstance, @Body() dto: RabbitMqSinkDto): Promise<SinkResponse[]> {
    return this.sinks.configure('rabbitmq', instance.id, dto);
  }

  @Get('rabbitmq/errors')
  @ApiReply(WebhookErrorResponse, { isArray: true, example: [RABBITMQ_SINK_ERROR_EXAMPLE] })
  @ApiOperation({
    summary: "Show the RabbitMQ sinks' latest errors",
    description: "The latest failed publications of this instance's RabbitMQ sinks (the last 20), with the target, event, attempts and error.",
  })
  rabbitMqErrors(@CurrentInstance() instance: RequestInstance): Promise<WebhookErrorResponse[]> {
    return this.sinks.errors('rabbitmq', { instanceId: instance.id });
  }

  @Get('nats')
  @ApiReply(SinkResponse, { isArray: true, example: [NATS_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Show the instance's NATS sinks",
    description:
      "The instance's NATS sinks: server URL (without its credentials), subject prefix or JetStream stream, and the `events` and `excludeMessages` filters.",
  })
  listNats(@CurrentInstance() instance: RequestInstance): Promise<SinkResponse[]> {
    return this.sinks.list('nats', instance.id);
  }

  @Audited('sink.nats.configure')
  @Post('nats')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SinkResponse, { isArray: true, description: LIST, example: [NATS_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Configure the instance's NATS sinks",
    description:
      "Publishes the instance's events to NATS subjects under a prefix (optionally into a JetStream stream), filtered by `events` and `excludeMessages`; managed like `/webhook`.",
  })
  configureNats(@CurrentInstance() instance: RequestInstance, @Body() dto: NatsSinkDto): Promise<SinkResponse[]> {
    return this.sinks.configure('nats', instance.id, dto);
  }

  @Get('nats/errors')
  @ApiReply(WebhookErrorResponse, {
    isArray: true,
    example: [NATS_SINK_ERROR_EXAMPLE],
  })
  @ApiOperation({
    summary: "Show the NATS sinks' latest errors",
    description: "The latest failed publications of this instance's NATS sinks (the last 20), with the target, event, attempts and error.",
  })
  natsErrors(@CurrentInstance() instance: RequestInstance): Promise<WebhookErrorResponse[]> {
    return this.sinks.errors('nats', { instanceId: instance.id });
  }

  @Get('kafka')
  @ApiReply(SinkResponse, { isArray: true, example: [KAFKA_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Show the instance's Kafka sinks",
    description: "The instance's Kafka sinks: brokers, topic, and the `events` and `excludeMessages` filters.",
  })
  listKafka(@CurrentInstance() instance: RequestInstance): Promise<SinkResponse[]> {
    return this.sinks.list('kafka', instance.id);
  }

  @Audited('sink.kafka.configure')
  @Post('kafka')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SinkResponse, { isArray: true, description: LIST, example: [KAFKA_SINK_EXAMPLE] })
  @ApiOperation({
    summary: "Configure the instance's Kafka sinks",
    description: "Publishes the instance's events to a Kafka topic, filtered by `events` and `excludeMessages`; managed like `/webhook`.",
  })
  configureKafka(@CurrentInstance() instance: RequestInstance, @Body() dto: KafkaSinkDto): Promise<SinkResponse[]> {
    return this.sinks.configure('kafka', instance.id, dto);
  }

  @Get('kafka/errors')
  @ApiReply(WebhookErrorResponse, {
    isArray: true,
    example: [KAFKA_SINK_ERROR_EXAMPLE],
  })
  @ApiOperation({
    summary: "Show the Kafka sinks' latest errors",
    description: "The latest failed publications of this instance's Kafka sinks (the last 20), with the target, event, attempts and error.",
  })
  kafkaErrors(@CurrentInstance() instance: RequestInstance): Promise<WebhookErrorResponse[]> {
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
  @ApiReply(SinkResponse, { isArray: true, example: [GLOBAL_RABBITMQ_SINK_EXAMPLE] })
  @ApiOperation({
    summary: 'List the global sinks',
    description:
      'Every global sink (at most one per broker: RabbitMQ, NATS, Kafka), set here or by the environment; an empty list when none is set (where `GET /globalsink/{kind}` answers 404).',
  })
  list(): Promise<SinkResponse[]> {
    return this.sinks.globalSinks();
  }

  @Get('rabbitmq')
  @ApiReply(SinkResponse, { example: GLOBAL_RABBITMQ_SINK_EXAMPLE })
  @ApiOperation({
    summary: 'Show the global RabbitMQ sink',
    description: "The RabbitMQ sink that receives every instance's events (set here or by the environment, e.g. `RABBITMQ_URL`).",
  })
  rabbitMq(): Promise<SinkResponse> {
    return this.sinks.globalSink('rabbitmq');
  }

  @Audited('globalsink.rabbitmq.configure')
  @Post('rabbitmq')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SinkResponse, { example: GLOBAL_RABBITMQ_SINK_EXAMPLE })
  @ApiOperation({
    summary: 'Configure the global RabbitMQ sink',
    description: "Publishes every instance's events to a RabbitMQ exchange, filtered by `events` and `excludeMessages`.",
  })
  configureRabbitMq(@Body() dto: GlobalRabbitMqSinkDto): Promise<SinkResponse> {
    return this.sinks.configureGlobal('rabbitmq', dto);
  }

  @Audited('globalsink.rabbitmq.delete')
  @Delete('rabbitmq')
  @ApiReply(ReplyResponse, { example: GLOBAL_RABBITMQ_SINK_DELETED_EXAMPLE })
  @ApiOperation({ summary: 'Remove the global RabbitMQ sink', description: "Stops publishing every instance's events to RabbitMQ." })
  deleteRabbitMq(): Promise<ReplyResponse> {
    return this.sinks.deleteGlobal('rabbitmq');
  }

  @Get('rabbitmq/errors')
  @ApiReply(WebhookErrorResponse, { isArray: true, example: [GLOBAL_SINK_ERROR_EXAMPLE] })
  @ApiOperation({
    summary: "Show the global RabbitMQ sink's latest errors",
    description: 'The latest failed publications of the global RabbitMQ sink (the last 20), with the target, event, attempts and error.',
  })
  rabbitMqErrors(): Promise<WebhookErrorResponse[]> {
    return this.sinks.errors('rabbitmq', { global: true });
  }

  @Get('nats')
  @ApiReply(SinkResponse, { example: ENV_NATS_SINK_EXAMPLE })
  @ApiOperation({ summary: 'Show the global NATS sink', description: "The NATS sink that receives every instance's events (set here or by the environment)." })
  nats(): Promise<SinkResponse> {
    return this.sinks.globalSink('nats');
  }

  @Audited('globalsink.nats.configure')
  @Post('nats')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SinkResponse, { example: GLOBAL_NATS_SINK_EXAMPLE })
  @ApiOperation({
    summary: 'Configure the global NATS sink',
    description:
      "Publishes every instance's events to NATS subjects under a prefix (optionally a JetStream stream), filtered by `events` and `excludeMessages`.",
  })
  configureNats(@Body() dto: GlobalNatsSinkDto): Promise<SinkResponse> {
    return this.sinks.configureGlobal('nats', dto);
  }

  @Audited('globalsink.nats.delete')
  @Delete('nats')
  @ApiReply(ReplyResponse, { example: GLOBAL_NATS_SINK_DELETED_EXAMPLE })
  @ApiOperation({ summary: 'Remove the global NATS sink', description: "Stops publishing every instance's events to NATS." })
  deleteNats(): Promise<ReplyResponse> {
    return this.sinks.deleteGlobal('nats');
  }

  @Get('nats/errors')
  @ApiReply(WebhookErrorResponse, { isArray: true, example: [GLOBAL_SINK_ERROR_EXAMPLE] })
  @ApiOperation({
    summary: "Show the global NATS sink's latest errors",
    description: 'The latest failed publications of the global NATS sink (the last 20), with the target, event, attempts and error.',
  })
  natsErrors(): Promise<WebhookErrorResponse[]> {
    return this.sinks.errors('nats', { global: true });
  }

  @Get('kafka')
  @ApiReply(SinkResponse, { example: ENV_KAFKA_SINK_EXAMPLE })
  @ApiOperation({
    summary: 'Show the global Kafka sink',
    description: "The Kafka sink that receives every instance's events (set here or by the environment).",
  })
  kafka(): Promise<SinkResponse> {
    return this.sinks.globalSink('kafka');
  }

  @Audited('globalsink.kafka.configure')
  @Post('kafka')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SinkResponse, { example: GLOBAL_KAFKA_SINK_EXAMPLE })
  @ApiOperation({
    summary: 'Configure the global Kafka sink',
    description: "Publishes every instance's events to a Kafka topic, filtered by `events` and `excludeMessages`.",
  })
  configureKafka(@Body() dto: GlobalKafkaSinkDto): Promise<SinkResponse> {
    return this.sinks.configureGlobal('kafka', dto);
  }

  @Audited('globalsink.kafka.delete')
  @Delete('kafka')
  @ApiReply(ReplyResponse, { example: GLOBAL_KAFKA_SINK_DELETED_EXAMPLE })
  @ApiOperation({ summary: 'Remove the global Kafka sink', description: "Stops publishing every instance's events to Kafka." })
  deleteKafka(): Promise<ReplyResponse> {
    return this.sinks.deleteGlobal('kafka');
  }

  @Get('kafka/errors')
  @ApiReply(WebhookErrorResponse, { isArray: true, example: [GLOBAL_SINK_ERROR_EXAMPLE] })
  @ApiOperation({
    summary: "Show the global Kafka sink's latest errors",
    description: 'The latest failed publications of the global Kafka sink (the last 20), with the target, event, attempts and error.',
  })
  kafkaErrors(): Promise<WebhookErrorResponse[]> {
    return this.sinks.errors('kafka', { global: true });
  }
}
