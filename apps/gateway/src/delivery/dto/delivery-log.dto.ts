import { Transform } from 'class-transformer';
import { instant, integer } from '../../common/query-values';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDate, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

export const DELIVERY_OUTCOMES = ['delivered', 'failed', 'pending', 'retrying'] as const;
export type DeliveryOutcomeName = (typeof DELIVERY_OUTCOMES)[number];
export const DELIVERY_PAGE_DEFAULT = 50;
export const DELIVERY_PAGE_MAX = 500;
/** A replay names at most this many event ids, or a window at most this long, and queues at most REPLAY_MAX_EVENTS events. */
export const REPLAY_MAX_IDS = 1_000;
export const REPLAY_MAX_WINDOW_DAYS = 7;
export const REPLAY_MAX_EVENTS = 10_000;
/** `<event id>:<target id>`: where the previous page ended. */
export const DELIVERY_CURSOR = /^[1-9][0-9]{0,18}:[A-Za-z0-9_.-]{1,100}$/;

/** Event ids as strings (JSON numbers lose digits past 2^53; both are taken). */
const eventIdList = () =>
  Transform(({ value }: { value: unknown }) =>
    Array.isArray(value) ? value.map((item) => (typeof item === 'number' && Number.isSafeInteger(item) ? String(item) : item)) : value,
  );

/** The filters of `GET /webhook/deliveries` and `GET /sink/deliveries` (the admin's route adds `instance`). */
export class DeliveryLogQueryDto {
  @IsOptional()
  @instant()
  @IsDate({ message: 'from must be an ISO 8601 date-time or Unix milliseconds' })
  from?: Date;

  @IsOptional()
  @instant()
  @IsDate({ message: 'to must be an ISO 8601 date-time or Unix milliseconds' })
  to?: Date;

  @IsOptional()
  @Matches(/^[1-9][0-9]{0,18}$/, { message: 'eventId must be an event id (digits)' })
  eventId?: string;

  @IsOptional()
  @IsString({ message: 'eventType must be a string' })
  @MaxLength(50, { message: 'eventType must be at most 50 characters' })
  eventType?: string;

  @IsOptional()
  @IsIn(DELIVERY_OUTCOMES, { message: `outcome must be one of ${DELIVERY_OUTCOMES.join(', ')}` })
  outcome?: DeliveryOutcomeName;

  @IsOptional()
  @IsString({ message: 'webhookId must be a string' })
  @MaxLength(100, { message: 'webhookId must be at most 100 characters' })
  webhookId?: string;

  @IsOptional()
  @IsString({ message: 'sinkId must be a string' })
  @MaxLength(100, { message: 'sinkId must be at most 100 characters' })
  sinkId?: string;

  @IsOptional()
  @integer()
  @IsInt({ message: 'limit must be an integer' })
  @Min(1, { message: 'limit must be at least 1' })
  @Max(DELIVERY_PAGE_MAX, { message: `limit must be at most ${DELIVERY_PAGE_MAX}` })
  limit?: number;

  @IsOptional()
  @Matches(DELIVERY_CURSOR, { message: "cursor must be a page's next_cursor" })
  cursor?: string;
}

export class AdminDeliveryLogQueryDto extends DeliveryLogQueryDto {
  @IsOptional()
  @IsString({ message: 'instance must be a string' })
  @MaxLength(100, { message: 'instance must be at most 100 characters' })
  instance?: string;
}

/** `POST /webhook/replay`: which events go again to which target. */
export class ReplayDto {
  @IsOptional()
  @IsString({ message: 'webhookId must be a string' })
  @MaxLength(100, { message: 'webhookId must be at most 100 characters' })
  @JSONSchema({ description: 'Replay to this webhook only (else to every enabled webhook and sink of the instance that takes the events)' })
  webhookId?: string;

  @IsOptional()
  @IsString({ message: 'sinkId must be a string' })
  @MaxLength(100, { message: 'sinkId must be at most 100 characters' })
  @JSONSchema({ description: 'Replay to this event sink (RabbitMQ, NATS, Kafka) only; not with `webhookId`' })
  sinkId?: string;

  @IsOptional()
  @instant()
  @IsDate({ message: 'from must be an ISO 8601 date-time or Unix milliseconds' })
  @JSONSchema({
    type: 'string',
    description: `Events recorded at or after this time (ISO 8601 or Unix milliseconds); with \`to\`, a window of at most ${REPLAY_MAX_WINDOW_DAYS} days`,
  })
  from?: Date;

  @IsOptional()
  @instant()
  @IsDate({ message: 'to must be an ISO 8601 date-time or Unix milliseconds' })
  @JSONSchema({ type: 'string', description: 'Events recorded at or before this time (ISO 8601 or Unix milliseconds)' })
  to?: Date;

  @IsOptional()
  @eventIdList()
  @IsArray({ message: 'eventIds must be an array of event ids' })
  @ArrayMinSize(1, { message: 'eventIds must not be empty' })
  @ArrayMaxSize(REPLAY_MAX_IDS, { message: `eventIds must hold at most ${REPLAY_MAX_IDS} ids` })
  @Matches(/^[1-9][0-9]{0,18}$/, { each: true, message: 'eventIds must be event ids (digits)' })
  @JSONSchema({
    type: 'array',
    items: { type: 'string', pattern: '^[1-9][0-9]{0,18}$' },
    description: `These events (their \`event_id\` in the delivery log), at most ${REPLAY_MAX_IDS}; instead of or within a window`,
  })
  eventIds?: string[];

  @IsOptional()
  @IsArray({ message: 'eventTypes must be an array of event types' })
  @ArrayMaxSize(50, { message: 'eventTypes must hold at most 50 types' })
  @IsString({ each: true, message: 'eventTypes must be event types' })
  @MaxLength(50, { each: true, message: 'eventTypes must be at most 50 characters each' })
  @JSONSchema({ description: 'Only events of these types (`messages`, `messages_update`, `connection`…)' })
  eventTypes?: string[];
}

/** `POST /admin/webhook/replay`: the same, for any instance's (or the global) targets. */
export class AdminReplayDto extends ReplayDto {
  @IsOptional()
  @IsString({ message: 'instance must be a string' })
  @MaxLength(100, { message: 'instance must be at most 100 characters' })
  @JSONSchema({ description: "Only this instance's events (its id); without a webhookId or sinkId, to every enabled target of this instance" })
  instance?: string;
}
