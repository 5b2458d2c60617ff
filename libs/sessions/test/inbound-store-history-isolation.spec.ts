import { FencedOutError, MessageRepository } from '@gw/persistence';
import { InboundStore } from '../src/messaging/inbound-store';
import { inboundStoreFixture } from './support/inbound-store-fixture';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Thrown to roll a held transaction back. */
class RolledBack extends Error {}

/** Whether `promise` settles within `ms`. */
const settlesWithin = (promise: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    sleep(ms).then(() => false),
  ]);

/**
 * Issue #38: a history chunk (up to ~1,000 messages, 1–5 s of statements) is written in a transaction
 * of its own (WriteOptions.alone), outside the group transactions that hold the writes of the worker's
 * other instances: while it is held, their writes commit; its own instance's later writes still wait
 * for it, and the fence still guards it.
 */
describe('InboundStore: a write of its own (a history chunk) holds no other instance back', () => {
  const fx = inboundStoreFixture();
  const { bus, logger, claim, message, receive, events } = fx;

  /**
   * Another transaction that has inserted (instance, key) and not committed: a write of the same key
   * waits for it. `release` rolls it back.
   */
  interface HeldKey {
    release(): Promise<void>;
    released: boolean;
  }
  const holdKey = async (instanceId: string, key: string): Promise<HeldKey> => {
    let inserted!: () => void;
    let rollBack!: () => void;
    const insertedNow = new Promise<void>((resolve) => (inserted = resolve));
    const rolledBack = new Promise<void>((resolve) => (rollBack = resolve));
    const held = fx.db.dataSource
      .transaction(async (tx) => {
        await new MessageRepository(fx.db.dataSource).within(tx).insertNew([message(instanceId, key)]);
        inserted();
        await rolledBack;
        throw new RolledBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      });
    await Promise.race([insertedNow, held]);
    const hold: HeldKey = {
      released: false,
      release: async () => {
        hold.released = true;
        rollBack();
        await held;
      },
    };
    return hold;
  };
  const release = (hold: HeldKey): Promise<void> => hold.release();

  it("lets another instance's write commit while the chunk's write is held, and keeps the chunk's instance's later writes behind it", async () => {
    const history = await claim('iso-history');
    const other = await claim('iso-other');
    const [h, o] = [history.instanceId, other.instanceId];
    const busy = [await claim('iso-busy-1'), await claim('iso-busy-2')];
    const sut = new InboundStore(fx.db.dataSource, bus, logger, { maxBatch: 64, maxInFlight: 2 });
    const lock = await holdKey(h, 'chunk');
    try {
      // Both group transactions in flight (other instances' writes, 0.3 s each): what arrives now waits for the next group.
      const inFlight = busy.map((lease) => sut.write(lease, () => sleep(300)));
      // Arriving together, as a chunk and the other instances' receipts and copies do: in one group before issue #38's fix.
      const chunk = sut.write(history, receive(h, 'chunk'), undefined, { alone: true });
      const otherWrite = sut.write(other, receive(o, 'receipt'), ['receipt']);
      const later = sut.write(history, receive(h, 'later'), ['later']);

      await Promise.all(inFlight);
      expect(await settlesWithin(otherWrite, 5_000)).toBe(true);
      await expect(otherWrite).resolves.toBe(true);
      expect(await events(o)).toEqual(['receipt']);
      // The chunk is still held, and its instance's next write waits for it.
      expect(await settlesWithin(chunk, 200)).toBe(false);
      expect(await settlesWithin(later, 200)).toBe(false);
      expect(await events(h)).toEqual([]);

      // And the other instance's next writes go on meanwhile too.
      await expect(sut.write(other, receive(o, 'copy'), ['copy'])).resolves.toBe(true);

      await release(lock);
      await expect(chunk).resolves.toBe(true);
      await expect(later).resolves.toBe(true);
      expect(await events(h)).toEqual(['chunk', 'later']);
      expect(await events(o)).toEqual(['receipt', 'copy']);
    } finally {
      if (!lock.released) await release(lock).catch(() => undefined);
    }
  }, 30_000);

  it("starts after the instance's earlier writes committed", async () => {
    const lease = await claim('iso-order');
    const id = lease.instanceId;
    const sut = new InboundStore(fx.db.dataSource, bus, logger);
    const lock = await holdKey(id, 'first');
    try {
      const first = sut.write(lease, receive(id, 'first'), ['first']);
      const chunk = sut.write(lease, receive(id, 'chunk'), undefined, { alone: true });
      expect(await settlesWithin(chunk, 500)).toBe(false);
      expect(await events(id)).toEqual([]);
      await release(lock);
      await expect(first).resolves.toBe(true);
      await expect(chunk).resolves.toBe(true);
      expect(await events(id)).toEqual(['first', 'chunk']);
    } finally {
      if (!lock.released) await release(lock).catch(() => undefined);
    }
  }, 30_000);

  it('is fenced: a chunk whose lease moved writes nothing', async () => {
    const stale = await claim('iso-fenced');
    const id = stale.instanceId;
    await fx.db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = $1`, [id]);
    await fx.leases.claim(id, 'worker-b', 60_000);
    const sut = new InboundStore(fx.db.dataSource, bus, logger);
    await expect(sut.write(stale, receive(id, 'chunk'), undefined, { alone: true })).rejects.toBeInstanceOf(FencedOutError);
    expect(await events(id)).toEqual([]);
  });
});
