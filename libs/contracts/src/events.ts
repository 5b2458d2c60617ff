import type { InstanceStatus } from './instance';

/**
 * Event payloads as stored in the outbox. The webhook relay and SSE add the delivery-time fields
 * (`BaseUrl`, and `token` only when the operator or the webhook asks for it).
 */
export const EVENT_TYPES = [
  'connection',
  'history',
  'messages',
  'messages_update',
  'chats',
  'contacts',
  'presence',
  'groups',
  'labels',
  'chat_labels',
  'blocks',
  'call',
  'newsletter_messages',
  'sender',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** `connection`: every change of an instance's connection state (captures: connection/*.json). */
export interface ConnectionEventPayload {
  EventType: 'connection';
  instance: {
    name: string;
    status: InstanceStatus;
    qrcode?: string;
    paircode?: string;
    lastDisconnect?: string;
    lastDisconnectReason?: string;
  };
  instanceName: string;
  owner: string;
  /** `LoggedOut` when the device was logged out. */
  type?: 'LoggedOut';
  [key: string]: unknown;
}
