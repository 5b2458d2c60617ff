import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { DELIVERY_OUTCOMES, type DeliveryOutcomeName } from './delivery-log.dto';

/** One delivery of the log (`GET /webhook/deliveries`, `GET /sink/deliveries`, `GET /admin/deliveries`). */
@ApiSchema({ name: 'Delivery', description: 'One delivery of an event to a webhook or an event sink, as the delivery log keeps it' })
export class DeliveryResponse {
  @ApiProperty({ description: 'The delivery id' })
  id!: string;
  @ApiProperty({ enum: ['webhook', 'rabbitmq', 'nats', 'kafka'], description: 'The target kind: `webhook`, or the sink kind' })
  kind!: string;
  @ApiProperty({ type: 'string', nullable: true, description: 'The webhook (null for a sink)' })
  webhook_id!: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'The event sink (null for a webhook)' })
  sink_id!: string | null;
  @ApiProperty({ description: 'The event: the same for every target, and the `webhook-id` header is `evt_` and this id' })
  event_id!: string;
  @ApiProperty({ description: 'The event type (`messages`, `connection`…)' })
  event_type!: string;
  @ApiProperty({ description: 'The instance whose event it is' })
  instance_id!: string;
  @ApiProperty({
    enum: [...DELIVERY_OUTCOMES],
    description: '`delivered`, `failed` (given up or discarded), `pending` (not tried yet) or `retrying` (failed, due again)',
  })
  outcome!: DeliveryOutcomeName;
  @ApiProperty({ type: 'integer', description: 'Attempts made (since the last replay)' })
  attempts!: number;
  @ApiProperty({ type: 'integer', nullable: true, description: "The last attempt's HTTP status (null when none: a network error, or a sink)" })
  last_status_code!: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'How long the last attempt took, in milliseconds (null before the first)' })
  latency_ms!: number | null;
  @ApiProperty({ description: "The last attempt's error (URL credentials masked); empty when none" })
  error!: string;
  @ApiProperty({ format: 'date-time', description: 'When the delivery was created (its event fanned out)' })
  created_at!: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When it was first tried (since the last replay)' })
  first_attempt_at!: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When it was last tried' })
  last_attempt_at!: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When it is due (pending or retrying); null once done' })
  next_attempt_at!: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When it was delivered or given up' })
  finished_at!: string | null;
  @ApiProperty({ description: 'Queued again by a replay' })
  replayed!: boolean;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the last replay queued it' })
  replayed_at!: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'Who replayed it: `admin` or the instance id' })
  replayed_by!: string | null;
}

/** A page of the delivery log, newest events first. */
@ApiSchema({ name: 'DeliveryPage', description: 'A page of the delivery log, newest events first' })
export class DeliveryPageResponse {
  @ApiProperty({ type: () => [DeliveryResponse], description: 'The deliveries, newest events first' })
  deliveries!: DeliveryResponse[];
  @ApiProperty({ type: 'integer', description: 'Deliveries per page' })
  limit!: number;
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next, older page; null on the last page' })
  next_cursor!: string | null;
}

/** What a replay queued. */
@ApiSchema({ name: 'DeliveryReplay', description: 'What a replay queued' })
export class DeliveryReplayResponse {
  @ApiProperty({ type: 'integer', description: 'Deliveries queued by this replay (made pending again, or made for a target that had none)' })
  queued!: number;
  @ApiProperty({ type: 'integer', description: 'Matching deliveries still pending: not queued twice, they go out once' })
  pending!: number;
  @ApiProperty({ type: 'integer', description: 'Events asked for that the outbox no longer holds (past MESSAGE_RETENTION_DAYS), or not this instance’s' })
  unavailable!: number;
}
