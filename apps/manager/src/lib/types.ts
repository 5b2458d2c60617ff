/**
 * The gateway's records as the console uses them: thin aliases over the types generated from the
 * gateway's OpenAPI document (`api-types.gen.ts`, `npm run api:types`), never declared again by hand.
 * The document's response schemas list no `required` fields yet; where the console relies on a field
 * being there, `Present` says so here instead of the console checking each one.
 */
import type { components, operations } from './api-types.gen';

/** The document's named schemas. */
export type Schemas = components['schemas'];

/** `T` with the fields `K` present (the gateway always answers them). */
export type Present<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: Exclude<T[P], undefined> };

/** The API's Instance record (GET /instance/all, /instance/status …): every field is always there. */
export type Instance = Present<
  Schemas['Instance'],
  | 'id'
  | 'token'
  | 'status'
  | 'paircode'
  | 'qrcode'
  | 'name'
  | 'profileName'
  | 'profilePicUrl'
  | 'isBusiness'
  | 'plataform'
  | 'systemName'
  | 'owner'
  | 'lastDisconnect'
  | 'lastDisconnectReason'
  | 'adminField01'
  | 'adminField02'
  | 'msg_delay_min'
  | 'msg_delay_max'
  | 'currentPresence'
  | 'created'
  | 'updated'
>;

/** GET /instance/status: the instance and its connection (the document types `jid` loosely: it is `{user}` or null). */
export type InstanceStatusReply = Omit<Schemas['InstanceStatus'], 'instance' | 'status'> & {
  instance: Instance;
  status: Present<NonNullable<Schemas['InstanceStatus']['status']>, 'connected' | 'loggedIn'> & { jid: { user: string } | null };
};

export type Webhook = Present<Schemas['Webhook'], 'id' | 'enabled' | 'url' | 'events' | 'excludeMessages' | 'addUrlEvents' | 'addUrlTypesMessages'>;

export type WebhookError = Present<Schemas['WebhookError'], 'created' | 'url' | 'type' | 'event' | 'status_code' | 'attempts' | 'error'>;

/** A campaign folder (GET /sender/listfolders). */
export type Folder = Present<
  Schemas['MessageQueueFolder'],
  | 'id'
  | 'info'
  | 'status'
  | 'scheduled_for'
  | 'delayMin'
  | 'delayMax'
  | 'log_delivered'
  | 'log_failed'
  | 'log_played'
  | 'log_read'
  | 'log_sucess'
  | 'log_total'
  | 'created'
  | 'updated'
>;

export type AsyncQueueStatus = Present<Schemas['AsyncQueueStatus'], 'response' | 'instanceId'> & {
  queue: Present<
    NonNullable<Schemas['AsyncQueueStatus']['queue']>,
    'status' | 'pending' | 'processingNow' | 'acceptingNewMessages' | 'sessionReady' | 'resetting'
  >;
};

export type Proxy = Present<Schemas['Proxy'], 'mode' | 'effective_mode' | 'proxy_url' | 'proxy_fallback' | 'managed' | 'last_test_at' | 'last_test_error'>;

export type Privacy = Required<Schemas['Privacy']>;

/** An event sink (GET /sink/{kind}, /globalsink). */
export type Sink = Present<Schemas['Sink'], 'id' | 'kind' | 'enabled' | 'url' | 'events' | 'excludeMessages'>;

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

/** An answer that carries the instance (connect, disconnect, hibernate, create …): `instance` is always there. */
export type WithInstance<T extends { instance?: unknown }> = Omit<T, 'instance'> & { instance: Instance };

export type InstanceConnectionReply = WithInstance<Schemas['InstanceConnection']>;
export type InstanceDisconnectedReply = WithInstance<Schemas['InstanceDisconnected']>;
export type InstanceCreatedReply = WithInstance<Schemas['InstanceCreated']>;

export type AdminTokenRotated = Present<Schemas['AdminTokenRotated'], 'admin_token'>;
export type RestartScheduled = Present<Schemas['RestartScheduled'], 'message'>;
export type ChatwootConfigUpdated = Present<Schemas['ChatwootConfigUpdated'], 'message' | 'chatwoot_inbox_webhook_url'>;
export type ProxyChanged = Omit<Schemas['ProxyChanged'], 'proxy'> & { proxy: Proxy; details: string };
export type AsyncQueueCleared = Omit<Schemas['AsyncQueueCleared'], 'stats'> & { stats: Record<string, number> };

/** A page of the delivery log (GET /webhook/deliveries), and one delivery of it. */
export type DeliveryPage = operations['list_get_webhook_deliveries']['responses'][200]['content']['application/json'];
export type Delivery = DeliveryPage['deliveries'][number];
/** What a replay queued (POST /webhook/replay). */
export type ReplayResult = operations['replayDeliveries']['responses'][200]['content']['application/json'];
