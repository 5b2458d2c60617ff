import { dropSignalSessionDumps, isSignalSessionDump, signalEventSummary } from './libsignal-console';

describe('dropSignalSessionDumps', () => {
  it('should recognise libsignal session dumps and nothing else', () => {
    expect(isSignalSessionDump(['Closing session:', { privKey: Buffer.from('secret') }])).toBe(true);
    expect(isSignalSessionDump(['Closing open session in favor of incoming prekey bundle'])).toBe(true);
    expect(isSignalSessionDump(['Failed to decrypt message with any known session...'])).toBe(true);
    expect(isSignalSessionDump(['gateway listening'])).toBe(false);
    expect(isSignalSessionDump([{ msg: 'Closing session' }])).toBe(false);
  });

  it('should keep the key material of a session dump off the console', () => {
    const written: unknown[][] = [];
    const original = console.info;
    console.info = (...args: unknown[]) => void written.push(args);
    try {
      dropSignalSessionDumps();
      console.info('Closing session:', { currentRatchet: { ephemeralKeyPair: { privKey: Buffer.from('private-key-bytes') } } });
      console.info('an ordinary line');
    } finally {
      console.info = original;
    }
    expect(written).toEqual([['an ordinary line']]);
  });

  it('should summarise a dropped line without its session record (SIGNAL_EVENTS_LOG)', () => {
    const record = { currentRatchet: { ephemeralKeyPair: { privKey: Buffer.from('private-key-bytes') } } };
    const closing = signalEventSummary(['Closing session:', record]);
    expect(closing).toEqual({ time: expect.any(String), libsignal: 'Closing session:' });
    expect(JSON.stringify(closing)).not.toContain('private');
    const failed = signalEventSummary(['Session error:Error: Bad MAC', 'Error: Bad MAC\n    at Object.verifyMAC (crypto.js:87:15)']);
    expect(failed).toEqual({ time: expect.any(String), libsignal: 'Session error:Error: Bad MAC', detail: 'Error: Bad MAC' });
  });
});
