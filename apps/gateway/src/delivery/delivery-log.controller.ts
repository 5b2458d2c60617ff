import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query, UseGuards } from '@nestjs/common';

import { ApiOperation, ApiQuery } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { AdminGuard, CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiArea } from '../openapi/api-areas';
import { ApiReply } from '../openapi/api-reply.decorator';
import { DeliveryLogService } from './delivery-log.service';
import { DELIVERY_PAGE_EXAMPLE, DELIVERY_REPLAY_EXAMPLE, SINK_DELIVERY_PAGE_EXAMPLE } from './dto/delivery.examples';
import { DeliveryPageResponse, DeliveryReplayResponse } from './dto/delivery.response';
import {
  AdminDeliveryLogQueryDto,
  AdminReplayDto,
  DELIVERY_OUTCOMES,
  DELIVERY_PAGE_DEFAULT,
  DELIVERY_PAGE_MAX,
  DeliveryLogQueryDto,
  REPLAY_MAX_EVENTS,
  REPLAY_MAX_IDS,
  REPLAY_MAX_WINDOW_DAYS,
  ReplayDto,
} from './dto/delivery-log.dto';
import type { RequestInstance } from '../common/request-instance';

const REPLAY_RULES = `Name events by \`eventIds\` (at most ${REPLAY_MAX_IDS}) or by a window \`from\`–\`to\` (at most ${REPLAY_MAX_WINDOW_DAYS} days, at most ${REPLAY_MAX_EVENTS} events), optionally only some \`eventTypes\`. Each target gets the events its \`events\` and \`excludeMessages\` filters take. The deliveries are written in one transaction and sent by the relay like any other (per-chat order, each receiver's in-flight limit, the retry schedule) with the event's original \`webhook-id\` header, so a receiver that already has the event can drop it; the delivery log shows them with \`replayed: true\`. The answer counts the deliveries \`queued\`, those still \`pending\` (they go out anyway, once) and the events the outbox no longer holds (\`unavailable\`: past MESSAGE_RETENTION_DAYS).`;

/** The filters every deliveries route takes; `@ApiQuery` per parameter, each described. */
function DeliveryFilters(options: { sinksOnly?: boolean } = {}): MethodDecorator {
  const decorators = [
    ApiQuery({
      name: 'from',
      required: false,
      description: 'Only deliveries created (their event recorded) at or after this time: ISO 8601 or Unix milliseconds',
      schema: { type: 'string' },
    }),
    ApiQuery({
      name: 'to',
      required: false,
      description: 'Only deliveries created at or before this time: ISO 8601 or Unix milliseconds',
      schema: { type: 'string' },
    }),
    ApiQuery({
      name: 'eventId',
      required: false,
      description: "Only this event's deliveries (its `event_id`)",
      schema: { type: 'string', pattern: '^[1-9][0-9]{0,18}$' },
    }),
    ApiQuery({
      name: 'eventType',
      required: false,
      description: 'Only events of this type (`messages`, `messages_update`, `connection`…)',
      schema: { type: 'string', maxLength: 50 },
    }),
    ApiQuery({
      name: 'outcome',
      required: false,
      description:
        '`delivered`; `failed` (given up, or discarded with a disabled target); `pending` (not tried yet); `retrying` (failed, due again at `next_attempt_at`)',
      schema: { type: 'string', enum: [...DELIVERY_OUTCOMES] },
    }),
    ...(options.sinksOnly
      ? []
      : [ApiQuery({ name: 'webhookId', required: false, description: "Only this webhook's deliveries", schema: { type: 'string', maxLength: 100 } })]),
    ApiQuery({ name: 'sinkId', required: false, description: "Only this event sink's deliveries", schema: { type: 'string', maxLength: 100 } }),
    ApiQuery({
      name: 'limit',
      required: false,
      description: `Deliveries per page (default ${DELIVERY_PAGE_DEFAULT}, at most ${DELIVERY_PAGE_MAX})`,
      schema: { type: 'integer', minimum: 1, maximum: DELIVERY_PAGE_MAX },
    }),
    ApiQuery({
      name: 'cursor',
      required: false,
      description: "The previous page's `next_cursor`: the deliveries after its last one",
      schema: { type: 'string' },
    }),
  ];
  return (target, key, descriptor) => {
    for (const decorate of decorators) decorate(target, key, descriptor);
  };
}

const LOG_DESCRIPTION =
  "Newest events first: for each delivery its id, the webhook or sink, the event (`event_id`, `event_type`), the `outcome`, the `attempts`, the last HTTP status, the last attempt's latency, the error (URL credentials masked), when it was created, first and last tried, when it is due again, and whether it is a replay (`replayed`, when and by whom). Page with `limit` and `cursor`. Finished deliveries are kept DELIVERY_LOG_RETENTION_DAYS days (default MESSAGE_RETENTION_DAYS). Not in uazapiGO.";

@ApiArea('Webhooks & SSE')
@Controller('webhook')
@UseGuards(InstanceGuard)
export class WebhookDeliveriesController {
  constructor(private readonly deliveries: DeliveryLogService) {}

  @Get('deliveries')
  @DeliveryFilters()
  @ApiReply(DeliveryPageResponse, { example: DELIVERY_PAGE_EXAMPLE, errors: ['invalid_request', 'invalid_token', 'not_found', 'rate_limited', 'internal'] })
  @ApiOperation({
    summary: "Read the instance's delivery log",
    description: `Every delivery to this instance's webhooks and event sinks (never another instance's). ${LOG_DESCRIPTION}`,
  })
  list(@CurrentInstance() instance: RequestInstance, @Query() query: DeliveryLogQueryDto): Promise<DeliveryPageResponse> {
    return this.deliveries.forInstance(instance.id, query);
  }

  @Audited('webhook.replay')
  @Post('replay')
  @HttpCode(HttpStatus.OK)
  @ApiReply(DeliveryReplayResponse, {
    example: DELIVERY_REPLAY_EXAMPLE,
    errors: ['invalid_request', 'invalid_token', 'not_found', 'conflict', 'rate_limited', 'internal'],
  })
  @ApiOperation({
    summary: "Replay the instance's events to its webhooks",
    description: `Delivers this instance's events again to \`webhookId\` (or \`sinkId\`), or to every enabled webhook and sink of the instance. ${REPLAY_RULES} Another instance's webhook is not found (404); a disabled one is refused (409). Not in uazapiGO.`,
  })
  replayDeliveries(@CurrentInstance() instance: RequestInstance, @Body() dto: ReplayDto): Promise<DeliveryReplayResponse> {
    return this.deliveries.replayForInstance(instance.id, dto);
  }
}

@ApiArea('Event sinks')
@Controller('sink')
@UseGuards(InstanceGuard)
export class SinkDeliveriesController {
  constructor(private readonly deliveries: DeliveryLogService) {}

  @Get('deliveries')
  @DeliveryFilters({ sinksOnly: true })
  @ApiReply(DeliveryPageResponse, {
    example: SINK_DELIVERY_PAGE_EXAMPLE,
    errors: ['invalid_request', 'invalid_token', 'not_found', 'rate_limited', 'internal'],
  })
  @ApiOperation({
    summary: "Read the instance's event sinks' delivery log",
    description: `The deliveries of this instance's RabbitMQ, NATS and Kafka sinks (\`sinkId\` for one). ${LOG_DESCRIPTION} Replay with \`POST /webhook/replay\` and a \`sinkId\`.`,
  })
  list(@CurrentInstance() instance: RequestInstance, @Query() query: DeliveryLogQueryDto): Promise<DeliveryPageResponse> {
    return this.deliveries.forInstance(instance.id, query, 'sink');
  }
}

@ApiArea('Admin')
@Controller('admin')
@UseGuards(AdminGuard)
export class AdminDeliveriesController {
  constructor(private readonly deliveries: DeliveryLogService) {}

  @Get('deliveries')
  @DeliveryFilters()
  @ApiQuery({
    name: 'instance',
    required: false,
    description: "Only the deliveries of this instance's events (its id), to its targets and the global ones",
    schema: { type: 'string', maxLength: 100 },
  })
  @ApiReply(DeliveryPageResponse, {
    example: DELIVERY_PAGE_EXAMPLE,
    errors: ['invalid_request', 'invalid_admin_token', 'not_found', 'rate_limited', 'internal'],
  })
  @ApiOperation({
    summary: 'Read the delivery log of every instance',
    description: `Every delivery to every webhook and event sink, global ones included; \`instance\` for one instance's. ${LOG_DESCRIPTION}`,
  })
  list(@Query() query: AdminDeliveryLogQueryDto): Promise<DeliveryPageResponse> {
    return this.deliveries.forAdmin(query);
  }

  @Audited('admin.webhook.replay', { target: (body) => (typeof body.instance === 'string' ? body.instance : null) })
  @Post('webhook/replay')
  @HttpCode(HttpStatus.OK)
  @ApiReply(DeliveryReplayResponse, {
    example: DELIVERY_REPLAY_EXAMPLE,
    errors: ['invalid_request', 'invalid_admin_token', 'not_found', 'conflict', 'rate_limited', 'internal'],
  })
  @ApiOperation({
    summary: 'Replay events to a webhook or sink of any instance',
    description: `Delivers events again to \`webhookId\` or \`sinkId\` (any instance's, or a global one), or with only \`instance\` to every enabled target of that instance; \`instance\` also limits a global target to that instance's events. ${REPLAY_RULES} Not in uazapiGO.`,
  })
  replayDeliveriesAsAdmin(@Body() dto: AdminReplayDto): Promise<DeliveryReplayResponse> {
    return this.deliveries.replayForAdmin(dto);
  }
}
