import type { SchemaObject } from '@nestjs/swagger';

const str = (description: string, extra: SchemaObject = {}): SchemaObject => ({ type: 'string', description, ...extra });
const int = (description: string, extra: SchemaObject = {}): SchemaObject => ({ type: 'integer', description, ...extra });
const time = (description: string): SchemaObject => ({ type: 'string', format: 'date-time', nullable: true, description });

/** One delivery of the log (`GET /webhook/deliveries`, `GET /sink/deliveries`, `GET /admin/deliveries`). */
const DELIVERY: SchemaObject = {
  type: 'object',
  properties: {
    id: str('The delivery id'),
    kind: str('The target kind: `webhook`, or the sink kind', { enum: ['webhook', 'rabbitmq', 'nats', 'kafka'] }),
    webhook_id: str('The webhook (null for a sink)', { nullable: true }),
    sink_id: str('The event sink (null for a webhook)', { nullable: true }),
    event_id: str('The event: the same for every target, and the `webhook-id` header is `evt_` and this id'),
    event_type: str('The event type (`messages`, `connection`…)'),
    instance_id: str('The instance whose event it is'),
    outcome: str('`delivered`, `failed` (given up or discarded), `pending` (not tried yet) or `retrying` (failed, due again)', {
      enum: ['delivered', 'failed', 'pending', 'retrying'],
    }),
    attempts: int('Attempts made (since the last replay)'),
    last_status_code: int("The last attempt's HTTP status (null when none: a network error, or a sink)", { nullable: true }),
    latency_ms: int('How long the last attempt took, in milliseconds (null before the first)', { nullable: true }),
    error: str("The last attempt's error (URL credentials masked); empty when none"),
    created_at: str('When the delivery was created (its event fanned out)', { format: 'date-time' }),
    first_attempt_at: time('When it was first tried (since the last replay)'),
    last_attempt_at: time('When it was last tried'),
    next_attempt_at: time('When it is due (pending or retrying); null once done'),
    finished_at: time('When it was delivered or given up'),
    replayed: { type: 'boolean', description: 'Queued again by a replay' },
    replayed_at: time('When the last replay queued it'),
    replayed_by: str('Who replayed it: `admin` or the instance id', { nullable: true }),
  },
  required: [
    'id',
    'kind',
    'webhook_id',
    'sink_id',
    'event_id',
    'event_type',
    'instance_id',
    'outcome',
    'attempts',
    'last_status_code',
    'latency_ms',
    'error',
    'created_at',
    'first_attempt_at',
    'last_attempt_at',
    'next_attempt_at',
    'finished_at',
    'replayed',
    'replayed_at',
    'replayed_by',
  ],
};

/** A page of the delivery log, newest events first. */
export const DELIVERY_PAGE_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    deliveries: { type: 'array', items: DELIVERY, description: 'The deliveries, newest events first' },
    limit: int('Deliveries per page'),
    next_cursor: str('Pass as `cursor` for the next, older page; null on the last page', { nullable: true }),
  },
  required: ['deliveries', 'limit', 'next_cursor'],
};

/** What a replay queued. */
export const REPLAY_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    queued: int('Deliveries queued by this replay (made pending again, or made for a target that had none)'),
    pending: int('Matching deliveries still pending: not queued twice, they go out once'),
    unavailable: int('Events asked for that the outbox no longer holds (past MESSAGE_RETENTION_DAYS), or not this instance’s'),
  },
  required: ['queued', 'pending', 'unavailable'],
};
