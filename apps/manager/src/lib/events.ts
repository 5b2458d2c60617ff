import { EVENT_TYPES } from './format';
import type { MonitorEvent } from './types';

export type StreamState = 'connecting' | 'open' | 'closed';

/**
 * One instance's events from `GET /sse` (EventSource sends no headers, so the token goes in the query
 * string, which the gateway accepts for /sse only). The browser reconnects by itself after a drop and
 * resumes with Last-Event-ID, so no event is lost across a blip.
 */
export function openEventStream(
  token: string,
  onEvent: (event: MonitorEvent) => void,
  onState: (state: StreamState) => void,
  EventSourceClass: typeof EventSource = EventSource,
  /** Only these event types (the gateway filters: `events=`); all when absent. */
  only?: string[],
): () => void {
  const filter = only?.length ? `&events=${only.map(encodeURIComponent).join(',')}` : '';
  const source = new EventSourceClass(`/sse?token=${encodeURIComponent(token)}${filter}`);
  onState('connecting');
  const handle = (type: string) => (message: MessageEvent<string>) => {
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(message.data) as Record<string, unknown>;
    } catch {
      return;
    }
    onEvent({ id: message.lastEventId, type, receivedAt: Date.now(), data });
  };
  const listeners = [...EVENT_TYPES, 'leads', 'message'].map((type) => [type, handle(type)] as const);
  for (const [type, listener] of listeners) source.addEventListener(type, listener as EventListener);
  source.onopen = () => onState('open');
  source.onerror = () => onState(source.readyState === EventSourceClass.CLOSED ? 'closed' : 'connecting');
  return () => {
    for (const [type, listener] of listeners) source.removeEventListener(type, listener as EventListener);
    source.close();
    onState('closed');
  };
}
