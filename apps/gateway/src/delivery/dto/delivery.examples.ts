import { DELIVERY_PAGE_DEFAULT } from './delivery-log.dto';
import type { DeliveryPageResponse, DeliveryReplayResponse, DeliveryResponse } from './delivery.response';

/** Example bodies of the delivery log routes (the OpenAPI document shows them), typed as their response classes. */
const DELIVERY_EXAMPLE: DeliveryResponse = {
  id: '90211',
  kind: 'webhook',
  webhook_id: 'w1a2b3c4d5e6f7',
  sink_id: null,
  event_id: '481516',
  event_type: 'messages',
  instance_id: 'r183e2ef9597845',
  outcome: 'retrying',
  attempts: 2,
  last_status_code: 503,
  latency_ms: 87,
  error: 'receiver answered 503',
  created_at: '2026-01-01T12:00:00.000Z',
  first_attempt_at: '2026-01-01T12:00:00.040Z',
  last_attempt_at: '2026-01-01T12:00:05.120Z',
  next_attempt_at: '2026-01-01T12:05:05.120Z',
  finished_at: null,
  replayed: false,
  replayed_at: null,
  replayed_by: null,
};

export const DELIVERY_PAGE_EXAMPLE: DeliveryPageResponse = { deliveries: [DELIVERY_EXAMPLE], limit: DELIVERY_PAGE_DEFAULT, next_cursor: null };

export const SINK_DELIVERY_PAGE_EXAMPLE: DeliveryPageResponse = {
  ...DELIVERY_PAGE_EXAMPLE,
  deliveries: [
    { ...DELIVERY_EXAMPLE, kind: 'rabbitmq', webhook_id: null, sink_id: 's1a2b3c4d5e6f7', last_status_code: null, error: 'connecting: ECONNREFUSED' },
  ],
};

export const DELIVERY_REPLAY_EXAMPLE: DeliveryReplayResponse = { queued: 12, pending: 1, unavailable: 0 };
