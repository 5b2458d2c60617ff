import type { WebhookRow } from '@gw/persistence';

/** The exclusion flags of `excludeMessages` (uazapi-notes §3), `IsGroupNo` being an older spelling. */
export const EXCLUDE_FLAGS = ['wasSentByApi', 'wasNotSentByApi', 'fromMeYes', 'fromMeNo', 'isGroupYes', 'isGroupNo'] as const;

interface MessageLike {
  wasSentByApi?: unknown;
  fromMe?: unknown;
  isGroup?: unknown;
  messageType?: unknown;
}

function messageOf(payload: Record<string, unknown>): MessageLike | null {
  const message = payload.message;
  return message && typeof message === 'object' ? (message as MessageLike) : null;
}

/** Whether an event of this type and payload goes to this webhook (its events and exclusions). */
export function webhookWants(webhook: Pick<WebhookRow, 'events' | 'excludeMessages'>, eventType: string, payload: Record<string, unknown>): boolean {
  if (webhook.events.length > 0 && !webhook.events.includes(eventType)) return false;
  // Exclusions apply to message events only (a receipt about an API-sent message still arrives).
  if (eventType !== 'messages' || webhook.excludeMessages.length === 0) return true;
  const message = messageOf(payload);
  if (!message) return true;
  const flags = new Set(webhook.excludeMessages.map((flag) => (flag === 'IsGroupNo' ? 'isGroupNo' : flag)));
  const sentByApi = message.wasSentByApi === true;
  const fromMe = message.fromMe === true;
  const isGroup = message.isGroup === true;
  if (flags.has('wasSentByApi') && sentByApi) return false;
  if (flags.has('wasNotSentByApi') && !sentByApi) return false;
  if (flags.has('fromMeYes') && fromMe) return false;
  if (flags.has('fromMeNo') && !fromMe) return false;
  if (flags.has('isGroupYes') && isGroup) return false;
  if (flags.has('isGroupNo') && !isGroup) return false;
  return true;
}

/** The events for one instance's webhook plus the global ones. */
export function matchWebhooks(event: { instanceId: string; eventType: string; payload: Record<string, unknown> }, webhooks: WebhookRow[]): WebhookRow[] {
  return webhooks.filter((webhook) => (webhook.instanceId === null || webhook.instanceId === event.instanceId) && webhookWants(webhook, event.eventType, event.payload));
}

/** `addUrlEvents` appends `/{event}`, then `addUrlTypesMessages` appends `/{messageType}`. */
export function deliveryUrl(webhook: Pick<WebhookRow, 'url' | 'addUrlEvents' | 'addUrlTypesMessages'>, eventType: string, payload: Record<string, unknown>): string {
  let url = webhook.url.replace(/\/+$/, '');
  if (webhook.addUrlEvents) url += `/${encodeURIComponent(eventType)}`;
  if (webhook.addUrlTypesMessages) {
    const messageType = messageOf(payload)?.messageType;
    if (typeof messageType === 'string' && messageType) url += `/${encodeURIComponent(messageType)}`;
  }
  return url;
}
