import { makeEventBuffer, type WAMessage } from '@whiskeysockets/baileys';
import { keepEventsAtClose } from './events-at-close';

const silent = {
  level: 'silent',
  child: () => silent,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

const message = (id: string): WAMessage => ({ key: { remoteJid: '5521999990000@s.whatsapp.net', fromMe: false, id }, message: { conversation: id } });

/** What rc14's end() does to the event buffer, after the close frame: announce it, then destroy the buffer. */
function endLikeBaileys(ev: ReturnType<typeof makeEventBuffer>): void {
  ev.emit('connection.update', { connection: 'close' });
  ev.removeAllListeners('connection.update');
  ev.destroy();
}

describe('keepEventsAtClose', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('delivers an upsert buffered when the socket ends, and one emitted just after, to the listener still attached', () => {
    const ev = makeEventBuffer(silent as never);
    keepEventsAtClose({ ev } as never);
    const got: string[] = [];
    ev.on('messages.upsert', ({ messages }) => got.push(...messages.map((m) => m.key.id ?? '')));

    // A stanza being handled: its message decrypted and receipted, its upsert in the buffer; the socket ends.
    ev.buffer();
    ev.emit('messages.upsert', { messages: [message('BUFFERED')], type: 'notify' });
    endLikeBaileys(ev);
    // The handling still under way emits the next one after the end.
    ev.emit('messages.upsert', { messages: [message('LATE')], type: 'notify' });
    expect(got).toEqual(['BUFFERED', 'LATE']);

    // The buffer is destroyed (its listeners removed) a while later.
    jest.advanceTimersByTime(10_000);
    ev.emit('messages.upsert', { messages: [message('AFTER')], type: 'notify' });
    expect(got).toEqual(['BUFFERED', 'LATE']);
  });

  it('without it, rc14 discards both (the receipt went out: WhatsApp never sends them again)', () => {
    const ev = makeEventBuffer(silent as never);
    const got: string[] = [];
    ev.on('messages.upsert', ({ messages }) => got.push(...messages.map((m) => m.key.id ?? '')));
    ev.buffer();
    ev.emit('messages.upsert', { messages: [message('BUFFERED')], type: 'notify' });
    endLikeBaileys(ev);
    ev.emit('messages.upsert', { messages: [message('LATE')], type: 'notify' });
    expect(got).toEqual([]);
  });
});
