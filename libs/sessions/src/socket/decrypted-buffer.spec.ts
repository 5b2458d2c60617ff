import { Curve, generateSignalPubKey } from '@whiskeysockets/baileys';
import { DEFAULT_CONNECTION_CONFIG, initAuthCreds, type SignalDataSet, type SignalKeyStore } from '../baileys';
import { DecryptedBuffer } from './decrypted-buffer';

/** An in-memory Signal key store, as Baileys' auth state hands it to the repository (with its transactions). */
function memoryKeys(): SignalKeyStore & { transaction: unknown; isInTransaction: unknown } {
  const data: Record<string, Record<string, unknown>> = {};
  return {
    transaction: async (work: () => Promise<unknown>) => work(),
    isInTransaction: () => false,
    get: async (type, ids) => Object.fromEntries(ids.map((id) => [id, data[type]?.[id]]).filter(([, value]) => value !== undefined)) as never,
    set: async (set: SignalDataSet) => {
      for (const [type, entries] of Object.entries(set)) for (const [id, value] of Object.entries(entries ?? {})) (data[type] ??= {})[id] = value;
    },
  };
}

const logger = { level: 'silent', child: () => logger, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never;
const make = DEFAULT_CONNECTION_CONFIG.makeSignalRepository;

/** Alice's first message to Bob (a pkmsg on a session built from Bob's prekey bundle). */
async function aliceToBob(bobRepository: (a: never, l: never) => ReturnType<typeof make>) {
  const bobCreds = initAuthCreds();
  const bobKeys = memoryKeys();
  const preKey = Curve.generateKeyPair();
  await bobKeys.set({ 'pre-key': { '1': preKey } });
  const bob = bobRepository({ creds: bobCreds, keys: bobKeys } as never, logger);
  const alice = make({ creds: initAuthCreds(), keys: memoryKeys() } as never, logger);
  const signed = bobCreds.signedPreKey;
  await alice.injectE2ESession({
    jid: '5511000000002@s.whatsapp.net',
    session: {
      registrationId: bobCreds.registrationId,
      identityKey: Buffer.from(generateSignalPubKey(bobCreds.signedIdentityKey.public)),
      signedPreKey: { keyId: signed.keyId, publicKey: Buffer.from(generateSignalPubKey(signed.keyPair.public)), signature: Buffer.from(signed.signature) },
      preKey: { keyId: 1, publicKey: Buffer.from(generateSignalPubKey(preKey.public)) },
    },
  });
  const message = await alice.encryptMessage({ jid: '5511000000002@s.whatsapp.net', data: Buffer.from('olá') });
  return { bob, message, from: '5511000000001@s.whatsapp.net' };
}

describe('DecryptedBuffer (issue 34: a message delivered again after its receipt was lost is not lost)', () => {
  it('should fail a second decrypt of the same message without the buffer (the key is spent), as rc14 then nacks and drops it', async () => {
    const { bob, message, from } = await aliceToBob(make as never);
    const once = { jid: from, type: message.type, ciphertext: message.ciphertext };
    expect(Buffer.from(await bob.decryptMessage(once)).toString()).toContain('olá');
    await expect(bob.decryptMessage(once)).rejects.toThrow('Key used already or never filled');
  });

  it('should answer the plaintext decrypted before when the same message comes again', async () => {
    const buffer = new DecryptedBuffer();
    const { bob, message, from } = await aliceToBob(buffer.wrap('inst-1', make) as never);
    const once = { jid: from, type: message.type, ciphertext: message.ciphertext };
    const first = Buffer.from(await bob.decryptMessage(once)).toString();
    expect(first).toContain('olá');
    expect(Buffer.from(await bob.decryptMessage(once)).toString()).toBe(first);
  });

  it('should still fail a message it never decrypted, and keep instances apart', async () => {
    const buffer = new DecryptedBuffer();
    const inner = { calls: 0 };
    const fake = () =>
      ({
        decryptMessage: async () => {
          inner.calls++;
          if (inner.calls > 1) throw new Error('Key used already or never filled');
          return Buffer.from('one');
        },
        decryptGroupMessage: async () => {
          throw new Error('No session found to decrypt message');
        },
      }) as never;
    const a = buffer.wrap('a', fake)({} as never, logger);
    const b = buffer.wrap('b', fake)({} as never, logger);
    const opts = { jid: 'x@s.whatsapp.net', type: 'msg' as const, ciphertext: Buffer.from([1, 2, 3]) };
    expect(Buffer.from(await a.decryptMessage(opts)).toString()).toBe('one');
    expect(Buffer.from(await a.decryptMessage(opts)).toString()).toBe('one');
    await expect(b.decryptMessage(opts)).rejects.toThrow('Key used already');
    await expect(a.decryptMessage({ ...opts, ciphertext: Buffer.from([9]) })).rejects.toThrow('Key used already');
    await expect(a.decryptGroupMessage({ group: 'g@g.us', authorJid: opts.jid, msg: Buffer.from([1]) })).rejects.toThrow('No session');
  });

  it("should keep a decrypted text in a buffer of its own, not the 8 KiB slab of Node's pool its view points into", async () => {
    const buffer = new DecryptedBuffer();
    const { bob, message, from } = await aliceToBob(buffer.wrap('bob', make) as never);
    const plaintext = await bob.decryptMessage({ jid: from, type: message.type, ciphertext: message.ciphertext });
    // What libsignal answers (Buffer.concat): a view into a shared slab far larger than the text.
    expect(plaintext.buffer.byteLength).toBeGreaterThan(plaintext.byteLength);
    const kept = buffer.recall(DecryptedBuffer.key('bob', from, message.ciphertext)) as Uint8Array;
    expect(Buffer.from(kept).equals(Buffer.from(plaintext))).toBe(true);
    expect(kept.buffer.byteLength).toBe(kept.byteLength);
  });

  it('should keep only the newest entries, and forget them after their time', () => {
    const buffer = new DecryptedBuffer(2, 50);
    buffer.remember('1', Buffer.from('1'));
    buffer.remember('2', Buffer.from('2'));
    buffer.remember('3', Buffer.from('3'));
    expect(buffer.size).toBe(2);
    expect(buffer.recall('1')).toBeUndefined();
    expect(buffer.recall('3')).toBeDefined();
  });
});
