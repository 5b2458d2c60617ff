import { useMemo, useState } from 'preact/hooks';
import type { StreamState } from '../lib/events';
import { EVENT_TYPES, summarizeEvent } from '../lib/format';
import type { MonitorEvent } from '../lib/types';
import { Button, Card, Empty, JsonView } from './kit';

/** The live event monitor: what /sse streamed since the instance was opened, newest first, filtered by type. */
export function EventsPanel({ events, stream, onClear }: { events: MonitorEvent[]; stream: StreamState; onClear: () => void }) {
  const [hidden, setHidden] = useState<Set<string>>(new Set());
  const [paused, setPaused] = useState<MonitorEvent[] | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const source = paused ?? events;
  const shown = useMemo(() => source.filter((event) => !hidden.has(event.type)), [source, hidden]);
  const counts = useMemo(() => {
    const map = new Map<string, number>();
    for (const event of events) map.set(event.type, (map.get(event.type) ?? 0) + 1);
    return map;
  }, [events]);
  const toggle = (type: string) =>
    setHidden((before) => {
      const next = new Set(before);
      if (next.has(type)) next.delete(type);
      else next.add(type);
      return next;
    });
  const only = (type: string) => setHidden(new Set(EVENT_TYPES.filter((entry) => entry !== type)));

  return (
    <Card
      title="Live events"
      testid="events"
      actions={
        <>
          <span class={`live live-${stream}`}>{stream === 'open' ? 'live' : stream}</span>
          <Button variant="ghost" class="btn-small" onClick={() => setPaused(paused ? null : events)}>
            {paused ? 'Resume' : 'Pause'}
          </Button>
          <Button variant="ghost" class="btn-small" onClick={onClear}>
            Clear
          </Button>
        </>
      }
    >
      <div class="filters" role="group" aria-label="Event types">
        <button type="button" class={`chip ${hidden.size === 0 ? 'chip-on' : ''}`} onClick={() => setHidden(new Set())}>
          all
        </button>
        {EVENT_TYPES.map((type) => (
          <button
            type="button"
            class={`chip ${hidden.has(type) ? '' : 'chip-on'}`}
            onClick={() => toggle(type)}
            onDblClick={() => only(type)}
            title="Click to show or hide; double-click to show only this type"
            data-event-filter={type}
          >
            {type} {counts.get(type) ? <span class="chip-count">{counts.get(type)}</span> : null}
          </button>
        ))}
      </div>
      {paused ? <p class="muted small">Paused: {events.length - paused.length} new events held back.</p> : null}
      {shown.length === 0 ? (
        <Empty>{events.length ? 'No event of the selected types.' : 'Waiting for events… Send a message or connect the instance to see them here.'}</Empty>
      ) : (
        <ol class="event-list" data-testid="event-list">
          {shown.map((event) => {
            const key = `${event.type}:${event.id}`;
            return (
              <li class="event" data-event-type={event.type}>
                <button type="button" class="event-row" onClick={() => setOpen(open === key ? null : key)} aria-expanded={open === key}>
                  <time class="event-time">{new Date(event.receivedAt).toLocaleTimeString()}</time>
                  <span class={`event-type event-type-${event.type}`}>{event.type}</span>
                  <span class="event-summary">{summarizeEvent(event)}</span>
                  <span class="event-id">#{event.id}</span>
                </button>
                {open === key ? <JsonView value={event.data} /> : null}
              </li>
            );
          })}
        </ol>
      )}
    </Card>
  );
}
