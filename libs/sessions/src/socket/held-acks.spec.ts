import { createLogger } from '@gw/platform';
import type { SignalDataSet, SignalKeyStore, WAMessage } from '../baileys';
import { assertAcksCanBeHeld, HeldAcks } from './held-acks';
import { RECEIPT_SETTLE_MS, RECEIVED_PLAINTEXT, ReceivedPlaintexts } from './received-plaintexts';

const logger = createLogger('test', 'silent');
const message = (id: string, remoteJid = '5511@s.whatsapp.net', participant?: string): WAMessage =>
  ({ key: { id, remoteJid, participant, fromMe: false } }) as WAMessage;

/** A key store that records what it is given. */
function recordingKeys(): SignalKeyStore & { sets: SignalDataSet[] } {
  const sets: SignalDataSet[] = [];
  const stored = new Map<string, unknown>();
  return {
    sets,
    get: async (_type, ids) => Object.fromEntries(ids.filter((id) => stored.has(id)).map((id) => [id, stored.get(id)])) as never,
    set: async (data) => {
      sets.push(data);
      for (const [id, value] of Object.entries((data as Record<string, Record<string, unknown>>)[RECEIVED_PLAINTEXT] ?? {})) {
        if (value === null) stored.delete(id);
        else stored.set(id, value);
      }
    },
  };
}

describe('HeldAcks', () => {
  it('should send a message’s receipts only when the message is stored, once', async () => {
    const acks = new HeldAcks(logger);
    const sent: string[] = [];
    acks.hold(message('A'), async () => void sent.push('A receipt'));
    acks.hold(message('A'), async () => void sent.push('A history receipt'));
    acks.hold(message('B'), async () => void sent.push('B receipt'));
    expect(sent).toEqual([]);
    expect(acks.size).toBe(2);

    acks.release(message('B'));
    await Promise.resolve();
    expect(sent).toEqual(['B receipt']);
    acks.release(message('A'));
    acks.release(message('A'));
    await Promise.resolve();
    expect(sent).toEqual(['B receipt', 'A receipt', 'A history receipt']);
    expect(acks.size).toBe(0);
  });

  it("should send a stored message's receipt only once the keys its decrypt moved are stored too (ADR 0048), and never when they cannot be", async () => {
    let storeKeys!: () => void;
    let failKeys!: (error: Error) => void;
    let keys = new Promise<void>((resolve, reject) => ((storeKeys = resolve), (failKeys = reject)));
    const acks = new HeldAcks(logger, undefined, () => keys);
    const sent: string[] = [];
    acks.hold(message('A'), async () => void sent.push('A'));
    acks.release(message('A'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([]);
    storeKeys();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['A']);

    keys = new Promise<void>((resolve, reject) => ((storeKeys = resolve), (failKeys = reject)));
    acks.hold(message('B'), async () => void sent.push('B'));
    acks.release(message('B'));
    failKeys(new Error('the session has ended'));
    await new Promise((resolve) => setImmediate(resolve));
    // WhatsApp delivers B again; the keys as stored decrypt it again.
    expect(sent).toEqual(['A']);
  });

  it('should answer Baileys the gate of the inbound queue: undefined while it has room, else a promise it waits on', async () => {
    const acks = new HeldAcks(logger);
    expect(acks.hold(message('A'), async () => undefined)).toBeUndefined();
    let full = true;
    let makeRoom!: () => void;
    acks.setGate(() => (full ? new Promise<void>((resolve) => (makeRoom = resolve)) : undefined));
    const waiting = acks.hold(message('B'), async () => undefined);
    expect(waiting).toBeInstanceOf(Promise);
    expect(acks.waitingForRoom).toBe(true);
    // The message is held all the same: its receipt goes once it is stored.
    expect(acks.size).toBe(2);
    full = false;
    makeRoom();
    await waiting;
    expect(acks.waitingForRoom).toBe(false);
    expect(acks.hold(message('C'), async () => undefined)).toBeUndefined();
  });

  it('should tell apart the same id in two chats, or from two group participants', async () => {
    const acks = new HeldAcks(logger);
    const sent: string[] = [];
    acks.hold(message('X', 'g@g.us', '1@lid'), async () => void sent.push('first participant'));
    acks.hold(message('X', 'g@g.us', '2@lid'), async () => void sent.push('second participant'));
    acks.hold(message('X', '5511@s.whatsapp.net'), async () => void sent.push('a chat'));
    acks.release(message('X', 'g@g.us', '2@lid'));
    await Promise.resolve();
    expect(sent).toEqual(['second participant']);
  });

  it('should keep a receipt that cannot be sent from failing anything (the socket closed after the write)', async () => {
    const acks = new HeldAcks(logger);
    acks.hold(message('C'), async () => {
      throw new Error('Connection Closed');
    });
    expect(() => acks.release(message('C'))).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
  });

  it('should delete the plaintexts kept for a message once it is stored, not before', async () => {
    jest.useFakeTimers();
    try {
      const keys = recordingKeys();
      const plaintexts = new ReceivedPlaintexts(logger);
      plaintexts.attach(keys);
      const acks = new HeldAcks(logger, plaintexts);
      await plaintexts.keep('h1', Uint8Array.of(1));
      await plaintexts.keep('h2', Uint8Array.of(2));
      acks.hold(message('D'), async () => undefined);
      await plaintexts.keep('h3', Uint8Array.of(3));
      acks.hold(message('E'), async () => undefined);
      expect(await plaintexts.recall('h1')).toEqual(Buffer.from([1]));

      acks.release(message('D'));
      await jest.advanceTimersByTimeAsync(RECEIPT_SETTLE_MS);
      expect(await plaintexts.recall('h1')).toBeUndefined();
      expect(await plaintexts.recall('h2')).toBeUndefined();
      expect(await plaintexts.recall('h3')).toEqual(Buffer.from([3]));
      // One write deletes both of D's plaintexts.
      expect(keys.sets.at(-1)).toEqual({ [RECEIVED_PLAINTEXT]: { h1: null, h2: null } });
    } finally {
      jest.useRealTimers();
    }
  });

  it('should keep the plaintexts of a stored message whose receipt could not be sent, for the copy WhatsApp gives the next holder', async () => {
    jest.useFakeTimers();
    try {
      const keys = recordingKeys();
      const plaintexts = new ReceivedPlaintexts(logger);
      plaintexts.attach(keys);
      const acks = new HeldAcks(logger, plaintexts);
      await plaintexts.keep('k1', Uint8Array.of(1));
      acks.hold(message('F'), async () => {
        throw new Error('Connection Closed');
      });
      await plaintexts.keep('k2', Uint8Array.of(2));
      acks.hold(message('G'), async () => undefined);

      acks.release(message('F'));
      acks.release(message('G'));
      await jest.advanceTimersByTimeAsync(RECEIPT_SETTLE_MS);
      // F was stored but not receipted: WhatsApp gives it again, and its plaintext is what reads that copy.
      expect(await plaintexts.recall('k1')).toEqual(Buffer.from([1]));
      expect(await plaintexts.recall('k2')).toBeUndefined();
      expect(keys.sets.at(-1)).toEqual({ [RECEIVED_PLAINTEXT]: { k2: null } });
    } finally {
      jest.useRealTimers();
    }
  });

  it('should find Baileys patched (npm ci applies patches/)', () => {
    expect(() => assertAcksCanBeHeld()).not.toThrow();
  });
});
