import { openEventStream, type StreamState } from './events';
import type { MonitorEvent } from './types';

/** Just enough of EventSource: the URL it was opened with, its listeners, and a way to deliver events. */
class FakeEventSource {
  static readonly CLOSED = 2;
  static last: FakeEventSource;
  readonly listeners = new Map<string, (message: { data: string; lastEventId: string }) => void>();
  readyState = 0;
  closed = false;
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeEventSource.last = this;
  }
  addEventListener(type: string, listener: (message: { data: string; lastEventId: string }) => void) {
    this.listeners.set(type, listener);
  }
  removeEventListener(type: string) {
    this.listeners.delete(type);
  }
  close() {
    this.closed = true;
  }
  emit(type: string, data: string, id: string) {
    this.listeners.get(type)?.({ data, lastEventId: id });
  }
}

describe('the /sse stream of the console', () => {
  it('should open /sse with the token (and the event filter), hand over named events with their ids, and close', () => {
    const events: MonitorEvent[] = [];
    const states: StreamState[] = [];
    const close = openEventStream(
      'to ken',
      (event) => events.push(event),
      (state) => states.push(state),
      FakeEventSource as unknown as typeof EventSource,
      ['connection'],
    );
    const source = FakeEventSource.last;
    expect(source.url).toBe('/sse?token=to%20ken&events=connection');
    source.onopen?.();
    source.emit('connection', '{"instance":{"status":"connected"}}', '41');
    source.emit('messages', 'not json', '42');
    expect(events).toEqual([{ id: '41', type: 'connection', receivedAt: expect.any(Number), data: { instance: { status: 'connected' } } }]);
    source.readyState = FakeEventSource.CLOSED;
    source.onerror?.();
    close();
    expect(states).toEqual(['connecting', 'open', 'closed', 'closed']);
    expect(source.closed).toBe(true);
    expect(source.listeners.size).toBe(0);
  });

  it('should ask for every event type when no filter is given', () => {
    openEventStream(
      't',
      () => undefined,
      () => undefined,
      FakeEventSource as unknown as typeof EventSource,
    )();
    expect(FakeEventSource.last.url).toBe('/sse?token=t');
    expect([...FakeEventSource.last.listeners.keys()]).toEqual([]);
  });
});
