import { BufferJSON } from '../baileys';
import { storedMessageLookup } from './stored-messages';

describe('storedMessageLookup (Baileys getMessage from our store, issue 34)', () => {
  const raw = JSON.stringify({ key: { id: 'A1', fromMe: true, remoteJid: 'x@s.whatsapp.net' }, message: { conversation: 'oi' } }, BufferJSON.replacer);
  const rows: Record<string, { fromMe: boolean; raw: string | null }> = {
    A1: { fromMe: true, raw },
    B2: { fromMe: false, raw },
    C3: { fromMe: true, raw: null },
  };
  const lookup = storedMessageLookup({ findOne: async (_instance: string, id: string) => (rows[id] ?? null) as never });

  it('should answer our own message as it went out, for a retry receipt on a later socket', async () => {
    expect(await lookup('i', 'A1')).toEqual({ conversation: 'oi' });
  });

  it('should answer nothing for a message of someone else, one without a stored copy, or an unknown id', async () => {
    expect(await lookup('i', 'B2')).toBeUndefined();
    expect(await lookup('i', 'C3')).toBeUndefined();
    expect(await lookup('i', 'Z9')).toBeUndefined();
  });
});
