import type { OutboxEvent } from '@gw/persistence';
import { envelopeJson } from './delivery-sender';

/** A claimed event as the claim statements give it: the payload's JSON text as Postgres renders it, `payload` parsed on read. */
function claimed(payloadJson: string, onParse: () => void = () => undefined): OutboxEvent {
  const event = { id: '7', instanceId: 'i1', eventType: 'messages', chatId: 'c', payloadJson } as OutboxEvent;
  Object.defineProperty(event, 'payload', {
    enumerable: true,
    get: () => {
      onParse();
      return JSON.parse(payloadJson) as Record<string, unknown>;
    },
  });
  return event;
}

const base = 'http://gateway.example';

describe(envelopeJson.name, () => {
  it("should send a claimed payload's text as it is, BaseUrl first and the token last, without parsing it", () => {
    const parse = jest.fn();
    const text = '{"n": 1, "message": {"text": "a, b: c", "fromMe": false}, "EventType": "messages"}';
    const body = envelopeJson(base, claimed(text, parse), 'tok');
    expect(parse).not.toHaveBeenCalled();
    expect(body).toBe(`{"BaseUrl":"http://gateway.example",${text.slice(1, -1)},"token":"tok"}`);
    expect(Object.keys(JSON.parse(body) as object)).toEqual(['BaseUrl', 'n', 'message', 'EventType', 'token']);
    expect(JSON.parse(body)).toEqual({ BaseUrl: base, ...(JSON.parse(text) as object), token: 'tok' });
  });

  it('should send an empty payload and no token as the BaseUrl alone', () => {
    expect(envelopeJson(base, claimed('{}'), undefined)).toBe('{"BaseUrl":"http://gateway.example"}');
    expect(envelopeJson(base, claimed('{}'), '')).toBe('{"BaseUrl":"http://gateway.example","token":""}');
  });

  it('should mean what spreading the payload meant when it has a BaseUrl or token of its own', () => {
    const own = claimed('{"BaseUrl": "theirs", "token": "old", "n": 2}');
    expect(JSON.parse(envelopeJson(base, own, 'tok'))).toEqual({ BaseUrl: 'theirs', token: 'tok', n: 2 });
    expect(JSON.parse(envelopeJson(base, own, undefined))).toEqual({ BaseUrl: 'theirs', token: 'old', n: 2 });
  });

  it('should serialise an event that has no payload text (not a claim) as before', () => {
    const event: OutboxEvent = { id: '1', instanceId: 'i1', eventType: 'messages', chatId: '', payload: { n: 3 } };
    expect(envelopeJson(base, event, undefined)).toBe('{"BaseUrl":"http://gateway.example","n":3}');
  });
});
