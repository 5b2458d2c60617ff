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
export function matchWebhooks<T extends Pick<WebhookRow, 'instanceId' | 'events' | 'excludeMessages'>>(
  event: { instanceId: string; eventType: string; payload: Record<string, unknown> },
  webhooks: T[],
): T[] {
  return webhooks.filter(
    (webhook) => (webhook.instanceId === null || webhook.instanceId === event.instanceId) && webhookWants(webhook, event.eventType, event.payload),
  );
}

/**
 * `addUrlEvents` appends `/{event}`, then `addUrlTypesMessages` appends `/{messageType}`, to the URL's
 * path: a query string or fragment stays where it is (`http://h/hook?x=1` → `http://h/hook/messages?x=1`).
 * Without either option the configured URL is used as given.
 */
export function deliveryUrl(
  webhook: Pick<WebhookRow, 'url' | 'addUrlEvents' | 'addUrlTypesMessages'>,
  eventType: string,
  payload: Record<string, unknown>,
): string {
  let suffix = '';
  if (webhook.addUrlEvents) suffix += `/${encodeURIComponent(eventType)}`;
  if (webhook.addUrlTypesMessages) {
    const messageType = messageOf(payload)?.messageType;
    if (typeof messageType === 'string' && messageType) suffix += `/${encodeURIComponent(messageType)}`;
  }
  if (!suffix) return webhook.url;
  let url: URL;
  try {
    url = new URL(webhook.url);
  } catch {
    // Configured URLs are validated; should one not parse, the suffix still goes before any query.
    const at = webhook.url.search(/[?#]/);
    const [base, rest] = at < 0 ? [webhook.url, ''] : [webhook.url.slice(0, at), webhook.url.slice(at)];
    return `${base.replace(/\/+$/, '')}${suffix}${rest}`;
  }
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${suffix}`;
  return url.toString();
}
