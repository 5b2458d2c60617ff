import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * How a task of the inbound queue is ordered with the others (ADR 0013). Every task starts in arrival
 * order, once the task before it let it; they differ in what they wait for:
 * - `serial`: starts after every earlier task has finished, and lets the next start once it has
 *   finished (commands, and tasks that touch the database outside the store's write);
 * - `ordered`: starts once the one before let it, runs what it does before writing (network,
 *   identities) meanwhile, and its writes wait until every earlier task has finished; lets the next
 *   start once it has finished. A task that ends up writing nothing never waits for a commit;
 * - `pipelined`: for a task that writes at most once (its retries included, which the store does in
 *   order): lets the next task start as soon as it has handed its write to the store (or finished
 *   without one), without waiting for the commit. The store keeps a socket's writes in that order and
 *   never has two transactions of one socket in flight, so writes queued meanwhile share the next
 *   group transaction.
 */
export type InboundTaskMode = 'serial' | 'ordered' | 'pipelined';

interface Running {
  seq: number;
  mode: InboundTaskMode;
  release: () => void;
}

/**
 * One socket's inbound events in arrival order (the SerialQueue of old, ADR 0013). What a pipelined
 * task does before its write runs in order with the others' (and sees what their writes' work left in
 * memory only once that work ran, which is why such state is read inside the work); what it does
 * after the commit may overlap the next tasks' preparation. A task that must read what an earlier
 * task committed (from another connection) waits for `settled()` first.
 */
export class InboundQueue {
  private tail: Promise<void>;
  private seq = 0;
  /** Started and not finished, by sequence number: each promise resolves (never rejects) when its task ends. */
  private readonly active = new Map<number, Promise<void>>();
  private readonly current = new AsyncLocalStorage<Running>();
  private queued = 0;

  /** `after`: the first task starts once it resolved (the previous socket's queue of the same instance drained). */
  constructor(after: Promise<unknown> = Promise.resolve()) {
    this.tail = after.then(
      () => undefined,
      () => undefined,
    );
  }

  /** Tasks queued or running. */
  get depth(): number {
    return this.queued;
  }

  run<T>(task: () => Promise<T> | T, mode: InboundTaskMode = 'serial'): Promise<T> {
    const seq = ++this.seq;
    this.queued++;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    const start = this.tail;
    this.tail = released;
    const result = start.then(async () => {
      this.active.set(seq, done);
      try {
        if (mode === 'serial') await this.earlierThan(seq);
        return await this.current.run({ seq, mode, release: mode === 'pipelined' ? release : () => undefined }, task);
      } finally {
        this.active.delete(seq);
        this.queued--;
        finished();
        release();
      }
    });
    return result;
  }

  /** Called by the write path before a write goes to the store: an `ordered` task waits for every earlier task here. */
  async beforeWrite(): Promise<void> {
    const running = this.current.getStore();
    if (running?.mode === 'ordered') await this.earlierThan(running.seq);
  }

  /** Called by the write path once a write is in the store: the pipelined task running here lets the next one start. */
  handedOver(): void {
    this.current.getStore()?.release();
  }

  /**
   * Resolves when every task started before the calling one has finished (their writes committed or
   * failed): for a task about to read, from another connection, what those wrote.
   */
  settled(): Promise<void> {
    const running = this.current.getStore();
    return running ? this.earlierThan(running.seq) : Promise.resolve();
  }

  private async earlierThan(seq: number): Promise<void> {
    const earlier = [...this.active].filter(([other]) => other < seq).map(([, promise]) => promise);
    if (earlier.length > 0) await Promise.all(earlier);
  }
}
