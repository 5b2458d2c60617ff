import type { KeyMutation } from '@gw/persistence';
import { KeyWriteQueue } from './key-write-queue';

/** A write the test finishes by hand: what each batch carried, in order. */
function manualWriter() {
  const batches: Array<{ mutations: KeyMutation[]; finish: () => void; fail: (error: Error) => void }> = [];
  const write = (mutations: KeyMutation[]) => new Promise<void>((resolve, reject) => batches.push({ mutations, finish: resolve, fail: reject }));
  return { batches, write };
}

const key = (id: string, value: string | null = `v-${id}`): KeyMutation => ({ type: 'session', id, value });
const settled = async (promise: Promise<unknown>) => {
  let state = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
};

describe('KeyWriteQueue', () => {
  it('writes one batch at a time, each carrying what was queued while the one before was written', async () => {
    const { batches, write } = manualWriter();
    const queue = new KeyWriteQueue(write);
    const first = queue.enqueue([key('a')]);
    const second = queue.enqueue([key('b')]);
    const third = queue.enqueue([key('c'), key('b', 'b2')]);
    expect(batches).toHaveLength(1);
    expect(batches[0].mutations).toEqual([key('a')]);
    expect(second).toBe(third);
    expect(await settled(first)).toBe('pending');

    batches[0].finish();
    expect(await settled(first)).toBe('resolved');
    expect(await settled(second)).toBe('pending');
    // The later value of b replaced the earlier one, and stands after c (the order of their last change).
    expect(batches[1].mutations).toEqual([key('c'), key('b', 'b2')]);
    batches[1].finish();
    expect(await settled(third)).toBe('resolved');
    expect(queue.busy).toBe(false);
  });

  it('stored() covers everything queued so far, and the queue answers the newest value queued for a key', async () => {
    const { batches, write } = manualWriter();
    const queue = new KeyWriteQueue(write);
    expect(await settled(queue.stored())).toBe('resolved');
    void queue.enqueue([key('a')]);
    void queue.enqueue([key('a', null), key('b')]);
    const all = queue.stored();
    expect(queue.pending('session', 'a')).toEqual(key('a', null));
    expect(queue.pending('session', 'b')).toEqual(key('b'));
    expect(queue.pending('session', 'x')).toBeUndefined();
    expect(queue.size).toBe(3);
    batches[0].finish();
    expect(await settled(all)).toBe('pending');
    // Written now, not yet stored: still newer than the database.
    expect(queue.pending('session', 'b')).toEqual(key('b'));
    batches[1].finish();
    expect(await settled(all)).toBe('resolved');
    expect(queue.pending('session', 'b')).toBeUndefined();
  });

  it('stores nothing after a batch that failed: later mutations are refused with its error', async () => {
    const { batches, write } = manualWriter();
    const queue = new KeyWriteQueue(write);
    const first = queue.enqueue([key('a')]);
    const second = queue.enqueue([key('b')]);
    const failure = new Error('database gone');
    batches[0].fail(failure);
    await expect(first).rejects.toBe(failure);
    await expect(second).rejects.toBe(failure);
    await expect(queue.enqueue([key('c')])).rejects.toBe(failure);
    await expect(queue.stored()).rejects.toBe(failure);
    expect(batches).toHaveLength(1);
    expect(queue.refused).toBe(true);
  });

  it('refuse() drops what is queued, while the batch under way finishes', async () => {
    const { batches, write } = manualWriter();
    const queue = new KeyWriteQueue(write);
    const first = queue.enqueue([key('a')]);
    const second = queue.enqueue([key('b')]);
    const closed = new Error('closed');
    queue.refuse(closed);
    await expect(second).rejects.toBe(closed);
    batches[0].finish();
    await expect(first).resolves.toBeUndefined();
    expect(batches).toHaveLength(1);
    await expect(queue.enqueue([key('c')])).rejects.toBe(closed);
  });
});

describe('KeyWriteQueue: refused', () => {
  it('answers its failure to whoever asks, and a promise nobody reads ends nothing (a receipt held for a message never stored)', async () => {
    const unread: unknown[] = [];
    const onUnhandled = (reason: unknown) => unread.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const queue = new KeyWriteQueue(manualWriter().write);
      const ended = new Error('the session has ended');
      queue.refuse(ended);
      // Read: both reject with the failure.
      await expect(queue.stored()).rejects.toBe(ended);
      await expect(queue.enqueue([key('late')])).rejects.toBe(ended);
      // Not read (HeldAcks keeps keysStored() for a message that is never stored).
      queue.stored();
      queue.enqueue([key('later')]);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unread).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
