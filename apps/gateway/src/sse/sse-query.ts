import { ApiError } from '../common/api-error';
import { EXCLUDE_MESSAGES, WEBHOOK_EVENTS } from '../webhook/dto/webhook.dto';

/** The largest outbox id (bigint). */
const MAX_EVENT_ID = 9223372036854775807n;

/** What `GET /sse` asks for: which events, and where to resume (absent: from now on). */
export interface SseQuery {
  filter: { events: string[]; excludeMessages: string[] };
  lastEventId?: string;
}

/** `events=a,b&events=c` → ['a','b','c']. */
function listParameter(value: string | string[] | undefined): string[] {
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return values
    .flatMap((entry) => entry.split(','))
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** Reads and checks `events`, `excludeMessages` and `Last-Event-ID` (a 400 names the first bad value). */
export function parseSseQuery(
  eventsParameter: string | string[] | undefined,
  excludeParameter: string | string[] | undefined,
  lastEventIdHeader: string | undefined,
): SseQuery {
  const events = listParameter(eventsParameter);
  const excludeMessages = listParameter(excludeParameter);
  const unknownEvent = events.find((event) => !(WEBHOOK_EVENTS as readonly string[]).includes(event));
  if (unknownEvent) throw ApiError.badRequest(`events: unknown event "${unknownEvent}"`);
  const unknownFlag = excludeMessages.find((flag) => !(EXCLUDE_MESSAGES as readonly string[]).includes(flag));
  if (unknownFlag) throw ApiError.badRequest(`excludeMessages: unknown value "${unknownFlag}"`);
  if (lastEventIdHeader !== undefined && !/^\d{1,19}$/.test(lastEventIdHeader)) throw ApiError.badRequest('Last-Event-ID must be an event id');
  if (lastEventIdHeader !== undefined && BigInt(lastEventIdHeader) > MAX_EVENT_ID) throw ApiError.badRequest('Last-Event-ID must be an event id');
  return { filter: { events, excludeMessages }, lastEventId: lastEventIdHeader };
}
