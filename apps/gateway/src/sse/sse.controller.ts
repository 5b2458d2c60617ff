import { Controller, Get, Headers, HttpStatus, Inject, Query, Res, UseGuards } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { OutboxRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { FastifyReply } from 'fastify';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import type { GatewayConfig } from '../runtime/gateway-config';
import { BUS, GATEWAY_CONFIG, LOGGER } from '../runtime/tokens';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ApiArea } from '../openapi/api-areas';
import { ApiExtraModels, ApiHeader, ApiOperation, ApiQuery } from '@nestjs/swagger';
import { SSE_EVENT_EXAMPLE } from './dto/sse.examples';
import { SseEventResponse } from './dto/sse.response';
import { sseFrame } from './sse-frame';
import { parseSseQuery } from './sse-query';
import { SseStream, type SseStart } from './sse-stream';
import type { RequestInstance } from '../common/request-instance';

/** The response headers of a stream (and of a HEAD of it). */
const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * `GET /sse`: the instance's events as server-sent events, read from the outbox, so any gateway
 * replica serves any instance and `Last-Event-ID` resumes where the client left off.
 */
@ApiArea('Webhooks & SSE')
@Controller()
@UseGuards(InstanceGuard)
export class SseController {
  constructor(
    private readonly outbox: OutboxRepository,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get('sse')
  @ApiReply(
    {
      type: 'string',
      description:
        'Server-sent events, each an `SseEvent` (see its schema): `id` (resume with Last-Event-ID), `event` (the event type), `data` (the event JSON, an `SseEventData`)',
    },
    {
      contentType: 'text/event-stream',
      description: "The instance's events as they happen (comments `: heartbeat` keep the connection open)",
      example: sseFrame(SSE_EVENT_EXAMPLE),
    },
  )
  @ApiExtraModels(SseEventResponse)
  @ApiOperation({
    summary: "Stream the instance's events (server-sent events)",
    description:
      "The instance's events as server-sent events, as they happen: each has an `id`, its `event` type and the event JSON as `data`, the same bodies the webhooks receive. `events` and `excludeMessages` filter them as a webhook's do; `Last-Event-ID` resumes after the last event received. The token may come as `?token=` (EventSource sends no headers).",
  })
  @ApiQuery({
    name: 'events',
    required: false,
    type: String,
    description: "Only these events (comma-separated, or the parameter repeated), as a webhook's `events`; every event when absent",
  })
  @ApiQuery({
    name: 'excludeMessages',
    required: false,
    type: String,
    description: "Messages not to stream, as a webhook's `excludeMessages` (comma-separated, or repeated)",
  })
  @ApiHeader({ name: 'last-event-id', required: false, description: 'Resume after this event id (browsers send it by themselves when they reconnect)' })
  async stream(
    @CurrentInstance() instance: RequestInstance,
    @Query('events') eventsParameter: string | string[] | undefined,
    @Query('excludeMessages') excludeParameter: string | string[] | undefined,
    @Headers('last-event-id') lastEventIdHeader: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const query = parseSseQuery(eventsParameter, excludeParameter, lastEventIdHeader);
    if (reply.request.method === 'HEAD') {
      // HEAD (Fastify serves it with this handler) asks for the headers only: a stream would never end.
      reply.hijack();
      reply.raw.writeHead(HttpStatus.OK, STREAM_HEADERS);
      reply.raw.end();
      return;
    }
    const start = await this.startOf(instance.id, query.lastEventId);
    const raw = reply.raw;
    reply.hijack();
    raw.writeHead(HttpStatus.OK, STREAM_HEADERS);
    raw.write(`retry: 3000\n: connected\n\n`);
    new SseStream({ outbox: this.outbox, bus: this.bus, config: this.config, logger: this.logger }, instance.id, query.filter, start, raw).start();
  }

  /** The cursor is a commit-safe outbox position, not the id alone: see OutboxRepository.readSettled. */
  private async startOf(instanceId: string, lastEventId: string | undefined): Promise<SseStart> {
    if (lastEventId !== undefined) return { cursor: await this.outbox.positionOf(instanceId, lastEventId), skip: new Set<string>() };
    const { position, skip } = await this.outbox.currentPosition(instanceId);
    return { cursor: position, skip };
  }
}
