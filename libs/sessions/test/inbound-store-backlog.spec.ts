import { InboundStore } from '../src/messaging/inbound-store';
import { inboundStoreFixture } from './support/inbound-store-fixture';

/**
 * ADR 0049: a write that arrives while the store's transactions are full is queued without reading the
 * backlog. Every write used to read the whole backlog (which writes may start now, and the share of each
 * instance), so a backlog of 20,000 writes (50 instances flooded) cost 20,000 × 20,000 steps: the worker
 * spent 58 % of its CPU there and stored 106 messages in a minute. The backlog is read once a transaction
 * ends, or when a write of an idle instance arrives; what is written, and in which order, is unchanged.
 */
describe('InboundStore: a backlog is not read again for every write', () => {
  const fx = inboundStoreFixture();
  const { bus, logger, claim, receive, events } = fx;

  it('queues writes behind full transactions without reading the backlog, then writes all of them in order', async () => {
    const instances = await Promise.all(Array.from({ length: 8 }, (_, index) => claim(`backlog-${index}`)));
    const sut = new InboundStore(fx.db.dataSource, bus, logger, { maxBatch: 64, maxInFlight: 1 });
    const reads = jest.spyOn(sut as unknown as { groupShare(): number }, 'groupShare');

    // The one transaction the store may have in flight, held until released.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const holder = await claim('backlog-holder');
    const held = sut.write(holder, async (tx, out) => {
      await released;
      await receive(holder.instanceId, 'held')(tx, out);
    });
    const readsBefore = reads.mock.calls.length;

    const perInstance = 250;
    const writes: Array<Promise<boolean>> = [];
    for (let index = 0; index < perInstance; index++) {
      for (const lease of instances) writes.push(sut.write(lease, receive(lease.instanceId, `m${index}`), [`m${index}`]));
    }
    expect(sut.pending()).toBe(1 + perInstance * instances.length);
    // 2,000 writes arrived behind a full store: the backlog was not read for them (it was, 2,000 times, before).
    expect(reads.mock.calls.length - readsBefore).toBe(0);

    release();
    await held;
    await Promise.all(writes);
    // Read once per transaction started, not once per write.
    const transactions = sut.stats.transactions;
    expect(reads.mock.calls.length).toBeLessThanOrEqual(2 * transactions + 2);
    expect(transactions).toBeLessThan(perInstance * instances.length);
    for (const lease of instances) expect(await events(lease.instanceId)).toEqual(Array.from({ length: perInstance }, (_, index) => `m${index}`));
    expect(sut.pending()).toBe(0);
  }, 60_000);

  it('keeps a write of its own (a history chunk) deep in the backlog reachable while the groups are full', async () => {
    const [busy, history] = [await claim('backlog-busy'), await claim('backlog-history')];
    const sut = new InboundStore(fx.db.dataSource, bus, logger, { maxBatch: 4, maxInFlight: 1 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = sut.write(busy, async (tx, out) => {
      await released;
      await receive(busy.instanceId, 'held')(tx, out);
    });
    const behind = Array.from({ length: 50 }, (_, index) => sut.write(busy, receive(busy.instanceId, `b${index}`), [`b${index}`]));
    // The groups are full; a chunk goes alone beside them, even behind 50 waiting writes.
    await expect(sut.write(history, receive(history.instanceId, 'chunk'), undefined, { alone: true })).resolves.toBe(true);
    expect(await events(history.instanceId)).toEqual(['chunk']);
    release();
    await held;
    await Promise.all(behind);
    expect(await events(busy.instanceId)).toEqual(['held', ...Array.from({ length: 50 }, (_, index) => `b${index}`)]);
  }, 60_000);
});
