import { BufferJSON, initAuthCreds } from '../baileys';
import { deserializeCreds, deserializeKey, serializeAuthValue } from './auth-serialization';

/** Every Buffer reachable from a parsed value. */
function buffersOf(value: unknown, found: Buffer[] = []): Buffer[] {
  if (Buffer.isBuffer(value)) found.push(value);
  else if (value && typeof value === 'object') for (const child of Object.values(value)) buffersOf(child, found);
  return found;
}

describe('auth serialization', () => {
  it("should write every value as Baileys' BufferJSON.replacer does, with bytes in it or not", () => {
    const session = { abc: { _sessions: { key: { currentRatchet: { rootKey: 'cm9vdA==', previousCounter: 3 }, indexInfo: { closed: -1 } } }, version: 'v1' } };
    const values: unknown[] = [
      session,
      initAuthCreds(),
      { private: Buffer.from('a'), public: new Uint8Array([1, 2, 3]) },
      { nested: [{ type: 'Buffer', data: [1, 2] }, 'x', 1, null, true] },
      { when: new Date(0), list: [1, 'two', { three: 3 }] },
      Buffer.from('bytes'),
      Buffer.from(JSON.stringify([{ senderKeyId: 7, senderChainKey: { iteration: 2, seed: Buffer.alloc(32, 9) } }])),
      new Uint8Array([0, 1, 254, 255]),
      Buffer.from('a slice of a larger buffer').subarray(2, 7),
      Buffer.alloc(0),
      'text',
      7,
      null,
    ];
    for (const value of values) expect(serializeAuthValue(value)).toBe(JSON.stringify(value, BufferJSON.replacer));
  });

  it('should read creds back equal, their Buffers in one allocation of exactly their bytes (no slab of the shared pool)', () => {
    const creds = initAuthCreds();
    const read = deserializeCreds(serializeAuthValue(creds));
    expect(serializeAuthValue(read)).toBe(serializeAuthValue(creds));
    expect(Buffer.from(read.noiseKey.private).equals(Buffer.from(creds.noiseKey.private))).toBe(true);
    const buffers = buffersOf(read);
    expect(buffers.length).toBeGreaterThan(5);
    const total = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
    for (const buffer of buffers) {
      expect(buffer.buffer).toBe(buffers[0].buffer);
      expect(buffer.buffer.byteLength).toBe(total);
    }
  });

  it('should keep the Buffers of a key apart from the pool, and a key that is a Buffer in its own ArrayBuffer', () => {
    const preKey = deserializeKey('pre-key', serializeAuthValue({ private: Buffer.from('a'.repeat(32)), public: Buffer.from('b'.repeat(33)) })) as {
      private: Buffer;
      public: Buffer;
    };
    expect(preKey.private.toString()).toBe('a'.repeat(32));
    expect(preKey.public.toString()).toBe('b'.repeat(33));
    expect(preKey.private.buffer.byteLength).toBe(65);

    const record = Buffer.from('a serialised session record');
    const session = deserializeKey('session', serializeAuthValue(record)) as Buffer;
    expect(session.equals(record)).toBe(true);
    expect(session.buffer.byteLength).toBe(record.length);
  });

  it('should still make app-state sync keys protobuf messages', () => {
    const key = deserializeKey('app-state-sync-key', serializeAuthValue({ keyData: Buffer.from('key bytes'), timestamp: 7 })) as {
      keyData: Uint8Array;
      constructor: { name: string };
    };
    expect(key.constructor.name).toBe('AppStateSyncKeyData');
    expect(Buffer.from(key.keyData).toString()).toBe('key bytes');
  });
});
