/** The gateway's records as the console uses them (the API's field names). */
import type { InstanceRecord } from '@gw/contracts';

/** The API's Instance record, as its contract declares it. */
export type Instance = InstanceRecord;

export interface InstanceStatusReply {
  instance: Instance;
  status: { connected: boolean; loggedIn: boolean; jid: { user: string } | null };
}

export interface Webhook {
  id: string;
  enabled: boolean;
  url: string;
  events: string[];
  excludeMessages: string[];
  addUrlEvents: boolean;
  addUrlTypesMessages: boolean;
  includeToken?: boolean;
  secret?: string;
  created?: string;
  updated?: string;
}

export interface WebhookError {
  created: string;
  url: string;
  type: string;
  event: string;
  message_type?: string;
  status_code: number;
  attempts: number;
  error: string;
  payload?: unknown;
}

export interface Folder {
  id: string;
  info: string;
  status: string;
  scheduled_for: number;
  delayMin: number;
  delayMax: number;
  log_delivered: number;
  log_failed: number;
  log_played: number;
  log_read: number;
  log_sucess: number;
  log_total: number;
  created: string;
  updated: string;
}

export interface AsyncQueueStatus {
  response: string;
  instanceId: string;
  queue: { status: string; pending: number; processingNow: boolean; acceptingNewMessages: boolean; sessionReady: boolean; resetting: boolean };
}

export interface Proxy {
  mode: string;
  effective_mode: string;
  proxy_url: string;
  proxy_fallback: string;
  managed: boolean;
  last_test_at: number;
  last_test_error: string;
}

export type Privacy = Record<'groupadd' | 'last' | 'status' | 'profile' | 'readreceipts' | 'online' | 'calladd', string>;

/** One event as the monitor keeps it. */
export interface MonitorEvent {
  /** The outbox id (SSE `id`). */
  id: string;
  type: string;
  receivedAt: number;
  data: Record<string, unknown>;
}

/** A simulated phone of the sandbox. */
export interface SimPhone {
  phone: string;
  jid: string;
  lid: string;
  name: string;
  business: boolean;
}
