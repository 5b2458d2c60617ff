import { Controller, Get, Headers, HttpStatus, Inject, Query, Res, UseGuards } from '@nestjs/common';
import { Bus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import { OutboxRepository, type InstanceEntity, type OutboxPosition, type SettledRead } from '@gw/persistence';
import { type Logger, metrics } from '@gw/platform';
import { webhookWants } from '@gw/relay';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../common/api-error';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { EXCLUDE_MESSAGES, WEBHOOK_EVENTS } from '../webhook/dto/webhook.dto';
import type { GatewayConfig } from '../runtime/gateway-config';
import { BUS, GATEWAY_CONFIG, LOGGER } from '../runtime/tokens';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ApiArea } from '../openapi/api-areas';
import { ApiHeader, ApiOperation, ApiQuery } from '@nestjs/swagger';

/** A client whose socket holds more than this unsent is too slow, and is dropped at once. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/**
 * Above this much unsent, the reader stops reading the outbox until the client takes it (`drain`); a
 * client that does not within SSE_SLOW_CLIENT_MS is dropped. So a resume with a large backlog is paced
 * by the client instead of dropped, and nothing is buffered without bound.
 */
const HIGH_WATER_BYTES = 1024 * 1024;
const BATCH = 500;
/** The largest outbox id (bigint). */
const MAX_EVENT_ID = 9223372036854775807n;
/** Notifications are at most once: a slow poll catches anything a lost one would have announced. */
const POLL_MS = 2_000;
/** Delay before reading again when committed events are not settled yet (see OutboxRepository.readSettled). */
const SETTLE_RETRY_MS = 25;

/** `events=a,b&events=c` → ['a','b','c']. */
function listParameter(value: string | string[] | undefined): string[] {
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values
    .flatMap((entry) => entry.split(','))
    .map((entry) => entry.trim())
    .filter(Boolean);
}

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
    { type: 'string', description: 'Server-sent events: `id` (resume with Last-Event-ID), `event` (the event type), `data` (the event JSON)' },
    {
      contentType: 'text/event-stream',
      description: "The instance's events as they happen (comments `: heartbeat` keep the connection open)",
      example:
        'id: 1042\nevent: messages\ndata: {"BaseUrl":"https://gateway.example.com","EventType":"messages","instanceName":"minha-instancia","message":{…}}\n\n',
    },
  )
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
    @CurrentInstance() instance: InstanceEntity,
    @Query('events') eventsParameter: string | string[] | undefined,
    @Query('excludeMessages') excludeParameter: string | string[] | undefined,
    @Headers('last-event-id') lastEventIdHeader: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const events = listParameter(eventsParameter);
    const excludeMessages = listParameter(excludeParameter);
    const unknownEvent = events.find((event) => !(WEBHOOK_EVENTS as readonly string[]).includes(event));
    if (unknownEvent) throw ApiError.badRequest(`events: unknown event "${unknownEvent}"`);
    const unknownFlag = excludeMessages.find((flag) => !(EXCLUDE_MESSAGES as readonly string[]).includes(flag));
    if (unknownFlag) throw ApiError.badRequest(`excludeMessages: unknown value "${unknownFlag}"`);
    if (lastEventIdHeader !== undefined && !/^\d{1,19}$/.test(lastEventIdHeader)) throw ApiError.badRequest('Last-Event-ID must be an event id');
    if (lastEventIdHeader !== undefined && BigInt(lastEventIdHeader) > MAX_EVENT_ID) throw ApiError.badRequest('Last-Event-ID must be an event id');

    const headers = {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    };
    if (reply.request.method === 'HEAD') {
      // HEAD (Fastify serves it with this handler) asks for the headers only: a stream would never end.
      reply.hijack();
      reply.raw.writeHead(HttpStatus.OK, headers);
      reply.raw.end();
      return;
    }

    // The cursor is a commit-safe outbox position, not the id alone: see OutboxRepository.readSettled.
    let skip = new Set<string>();
    let cursor: OutboxPosition;
    if (lastEventIdHeader !== undefined) cursor = await this.outbox.positionOf(instance.id, lastEventIdHeader);
    else ({ position: cursor, skip } = await this.outbox.currentPosition(instance.id));
    const filter = { events, excludeMessages };
    const raw = reply.raw;
    reply.hijack();
    raw.writeHead(HttpStatus.OK, headers);
    raw.write(`retry: 3000\n: connected\n\n`);
    metrics().sseClients.inc();

    let closed = false;
    let draining: Promise<void> | null = null;
    let again = false;
    let settleRetry: NodeJS.Timeout | null = null;
    const close = () => {
      if (closed) return;
      closed = true;
      metrics().sseClients.dec();
      if (settleRetry) clearTimeout(settleRetry);
      clearInterval(heartbeat);
      clearInterval(poll);
      subscription.unsubscribe();
      raw.end();
    };
    const drop = (why: string) => {
      if (closed) return;
      this.logger.warn({ instanceId: instance.id, unsentBytes: raw.writableLength }, `SSE client too slow: dropped (${why})`);
      raw.destroy();
      close();
    };
    const write = (chunk: string) => {
      if (closed) return;
      raw.write(chunk);
      if (raw.writableLength > MAX_BUFFERED_BYTES) drop('buffer full');
    };
    /** Resolves once the client took what is buffered down to the high-water mark (or it was dropped or left). */
    const writable = () =>
      new Promise<void>((resolve) => {
        if (closed || raw.writableLength <= HIGH_WATER_BYTES) return resolve();
        const done = () => {
          clearTimeout(timer);
          raw.off('drain', done);
          raw.off('close', done);
          resolve();
        };
        const timer = setTimeout(() => {
          drop(`nothing read for ${this.config.sseSlowClientMs} ms`);
          done();
        }, this.config.sseSlowClientMs);
        raw.on('drain', done);
        raw.on('close', done);
      });
    // One reader at a time; a wake-up during a read asks for one more pass.
    const drain = () => {
      if (draining) {
        again = true;
        return;
      }
      draining = (async () => {
        do {
          again = false;
          let rows: SettledRead['rows'];
          do {
            let waiting: boolean;
            ({ rows, waiting } = await this.outbox.readSettled(instance.id, cursor, BATCH));
            // Committed events wait behind a transaction still running: look again shortly, not at the next poll.
            if (waiting && !closed && !settleRetry) {
              settleRetry = setTimeout(() => {
                settleRetry = null;
                drain();
              }, SETTLE_RETRY_MS);
            }
            for (const row of rows) {
              cursor = row.position;
              // Already visible when the client connected without a Last-Event-ID: not news.
              if (skip.size > 0 && skip.delete(row.id)) continue;
              if (!webhookWants(filter, row.eventType, row.payload)) continue;
              write(`id: ${row.id}\nevent: ${row.eventType}\ndata: ${JSON.stringify({ BaseUrl: this.config.publicBaseUrl, ...row.payload })}\n\n`);
              if (raw.writableLength > HIGH_WATER_BYTES) await writable();
              if (closed) break;
            }
          } while (rows.length === BATCH && !closed);
        } while (again && !closed);
      })()
        .catch((error: unknown) => this.logger.error({ err: error, instanceId: instance.id }, 'SSE read failed'))
        .finally(() => {
          draining = null;
        });
    };

    const subscription = this.bus.subscribe(Subjects.outbox(instance.id), () => drain());
    const heartbeat = setInterval(() => write(`: heartbeat ${Date.now()}\n\n`), this.config.sseHeartbeatMs);
    const poll = setInterval(drain, POLL_MS);
    raw.on('close', close);
    raw.on('error', close);
    drain();
  }
}
