import { dropSignalSessionDumps, isSignalSessionDump } from './libsignal-console';

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
});
