import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { EVENT_TYPES, type EventType } from '@gw/contracts';

/** An event's JSON (`data:`): the body a webhook receives for the same event. */
@ApiSchema({
  name: 'SseEventData',
  description: "An event's JSON: the same body the webhooks receive — `BaseUrl`, `EventType`, the instance, and the event's own fields",
})
export class SseEventData {
  @ApiProperty({ description: 'Where this gateway is reached (PUBLIC_BASE_URL)', example: 'https://gateway.example.com' })
  BaseUrl!: string;
  @ApiProperty({ enum: EVENT_TYPES, description: "The event type (as the frame's `event`)" })
  EventType!: EventType;
  @ApiProperty({ description: "The instance's name (empty on an event that belongs to no instance)" })
  instanceName!: string;
  @ApiProperty({ description: "The instance's phone number (empty before a WhatsApp account is paired)" })
  owner!: string;
  /** The event's own fields (`message`, `chat`, `instance`, `event`…), as the webhooks receive them. */
  [field: string]: unknown;
}

/**
 * One event of `GET /sse`: the frame `id: <id>\nevent: <event>\ndata: <JSON>\n\n` (see sseFrame), between
 * `: heartbeat` comments that keep the connection open.
 */
@ApiSchema({
  name: 'SseEvent',
  description: 'One server-sent event of `GET /sse`: its id, its type and its JSON, each on its own line (`id:`, `event:`, `data:`)',
})
export class SseEventResponse {
  @ApiProperty({ description: "The event's id: a reconnecting client sends it back as `Last-Event-ID` to resume after it", example: '1042' })
  id!: string;
  @ApiProperty({ enum: EVENT_TYPES, description: 'The event type: what `events` filters on (`messages`, `connection`…)' })
  event!: EventType;
  @ApiProperty({ type: () => SseEventData, description: 'The event JSON, on the `data:` line' })
  data!: SseEventData;
}
