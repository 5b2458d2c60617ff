import type { SignalKeyStore } from '../baileys';
import { RECEIPT_SETTLE_MS, RECEIVED_PLAINTEXT, ReceivedPlaintexts } from './received-plaintexts';

const logger = { level: 'silent', child: () => logger, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never;

/** A key store that keeps what is set and records the plaintexts deleted. */
function keyStore() {
  const rows = new Map<string, Uint8Array>();
  const deleted: string[] = [];
  const keys = {
    get: async (_type: string, ids: string[]) => Object.fromEntries(ids.filter((id) => rows.has(id)).map((id) => [id, rows.get(id)])),
    set: async (data: Record<string, Record<string, Uint8Array | null>>) => {
      for (const [hash, value] of Object.entries(data[RECEIVED_PLAINTEXT] ?? {})) {
        if (value === null) {
          rows.delete(hash);
          deleted.push(hash);
        } else rows.set(hash, value);
      }
    },
  };
  return { keys: keys as unknown as SignalKeyStore, rows, deleted };
}

describe(ReceivedPlaintexts.name, () => {
  afterEach(() => jest.useRealTimers());

  it('should delete a stored message’s plaintext only once its receipt has been out RECEIPT_SETTLE_MS with the socket open', async () => {
    const store = keyStore();
    const plaintexts = new ReceivedPlaintexts(logger);
    plaintexts.attach(store.keys);
    await plaintexts.keep('a', Buffer.from('one'));
    await plaintexts.keep('b', Buffer.from('two'));
    const t0 = Date.now();
    plaintexts.forget(['a'], t0);
    plaintexts.forget(['b'], t0 + 2_000);

    await plaintexts.flush(t0 + RECEIPT_SETTLE_MS - 1);
    expect(store.deleted).toEqual([]);
    await plaintexts.flush(t0 + RECEIPT_SETTLE_MS);
    expect(store.deleted).toEqual(['a']);
    await plaintexts.flush(t0 + 2_000 + RECEIPT_SETTLE_MS);
    expect(store.deleted).toEqual(['a', 'b']);
    plaintexts.close();
  });

  it('should keep, when the socket closes, the plaintexts of messages receipted in its last moments (a copy may come to the next holder)', async () => {
    const store = keyStore();
    const plaintexts = new ReceivedPlaintexts(logger);
    plaintexts.attach(store.keys);
    await plaintexts.keep('late', Buffer.from('receipted just before the close'));
    plaintexts.forget(['late']);
    plaintexts.close();
    await plaintexts.flush(Date.now() + 60_000);
    plaintexts.forget(['late']);
    expect(store.deleted).toEqual([]);
    // The next holder decrypts the copy WhatsApp delivers again from it.
    const heir = new ReceivedPlaintexts(logger);
    heir.attach(store.keys);
    expect(Buffer.from((await heir.recall('late'))!).toString()).toBe('receipted just before the close');
  });

  it('should write the due deletions on its own timer, after the settle time', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const store = keyStore();
    const plaintexts = new ReceivedPlaintexts(logger);
    plaintexts.attach(store.keys);
    await plaintexts.keep('c', Buffer.from('three'));
    plaintexts.forget(['c']);
    await jest.advanceTimersByTimeAsync(RECEIPT_SETTLE_MS - 100);
    expect(store.deleted).toEqual([]);
    await jest.advanceTimersByTimeAsync(200);
    expect(store.deleted).toEqual(['c']);
    plaintexts.close();
  });
});
