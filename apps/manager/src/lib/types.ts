/**
 * The gateway's records as the console uses them: thin aliases over the types generated from the
 * gateway's OpenAPI document (`api-types.gen.ts`, `npm run api:types`), never declared again by hand.
 * A response schema lists as `required` the fields its route always answers (ADR 0033), so the generated
 * types already say which fields the console can rely on.
 */
import type { components, operations } from './api-types.gen';

/** The document's named schemas. */
export type Schemas = components['schemas'];

/** The API's Instance record (GET /instance/all, /instance/status …). */
export type Instance = Schemas['Instance'];

/** GET /instance/status: the instance and its connection. */
export type InstanceStatusReply = Schemas['InstanceStatus'];

export type Webhook = Schemas['Webhook'];

export type WebhookError = Schemas['WebhookError'];

/** A campaign folder (GET /sender/listfolders). */
export type Folder = Schemas['MessageQueueFolder'];

export type AsyncQueueStatus = Schemas['AsyncQueueStatus'];

export type Proxy = Schemas['Proxy'];

export type Privacy = Required<Schemas['Privacy']>;

/** An event sink (GET /sink/{kind}, /globalsink). */
export type Sink = Schemas['Sink'];

/** One event as the monitor keeps it (the console's own record, not an API answer). */
export interface MonitorEvent {
  /** The outbox id (SSE `id`). */
  id: string;
  type: string;
  receivedAt: number;
  data: Record<string, unknown>;
}

/** A simulated phone of the sandbox (the simulator's control API, relayed under /sandbox: not in the gateway's document). */
export interface SimPhone {
  phone: string;
  jid: string;
  lid: string;
  name: string;
  business: boolean;
}

export type InstanceConnectionReply = Schemas['InstanceConnection'];
export type InstanceDisconnectedReply = Schemas['InstanceDisconnected'];
export type InstanceCreatedReply = Schemas['InstanceCreated'];

export type AdminTokenRotated = Schemas['AdminTokenRotated'];
export type RestartScheduled = Schemas['RestartScheduled'];
export type ChatwootConfigUpdated = Schemas['ChatwootConfigUpdated'];
export type ProxyChanged = Schemas['ProxyChanged'];
export type AsyncQueueCleared = Schemas['AsyncQueueCleared'];

/** A page of the delivery log (GET /webhook/deliveries), and one delivery of it. */
export type DeliveryPage = operations['list_get_webhook_deliveries']['responses'][200]['content']['application/json'];
export type Delivery = DeliveryPage['deliveries'][number];
/** What a replay queued (POST /webhook/replay). */
export type ReplayResult = operations['replayDeliveries']['responses'][200]['content']['application/json'];
