import { SSE_EVENT_EXAMPLE } from './dto/sse.examples';
import { sseFrame } from './sse-frame';

describe('sseFrame', () => {
  it('writes the id, event and JSON data lines of one event, ended by a blank line', () => {
    const frame = sseFrame({ id: '7', event: 'connection', data: { BaseUrl: 'http://gw', EventType: 'connection', instanceName: 'a', owner: '' } });
    expect(frame).toBe('id: 7\nevent: connection\ndata: {"BaseUrl":"http://gw","EventType":"connection","instanceName":"a","owner":""}\n\n');
  });

  it('gives back the event an EventSource parses from it (the documented example included)', () => {
    const frame = sseFrame(SSE_EVENT_EXAMPLE);
    expect(frame.endsWith('\n\n')).toBe(true);
    const lines = frame.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    const field = (name: string) => (lines.find((line) => line.startsWith(`${name}: `)) as string).slice(name.length + 2);
    expect({ id: field('id'), event: field('event'), data: JSON.parse(field('data')) as unknown }).toEqual(SSE_EVENT_EXAMPLE);
  });
});
