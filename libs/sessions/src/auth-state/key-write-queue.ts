import type { KeyMutation } from '@gw/persistence';

/** One write of the queue: the mutations merged into it, and the promise of their being stored. */
interface Batch {
  mutations: Map<string, KeyMutation>;
  stored: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const mutationKey = (type: string, id: string) => `${type}\u0000${id}`;

/**
 * An instance's Signal key writes, in order, one at a time, each write carrying every mutation queued
 * while the one before it was under way (ADR 0048).
 *
 * Baileys awaits the commit of each decrypt's key transaction before it decrypts the next stanza of
 * the socket, so a busy account's messages waited one database round trip each, one statement each
 * (bench/inbound). A decrypt's commit can go on before it is stored as long as nothing that depends on
 * it does: its receipt waits for `stored()` (HeldAcks), a drain for the queue to empty (settle()), and
 * every other write — pre-keys before their upload, a send's session — still waits for its own batch.
 * Batches are stored in the order they were queued, so what is durable is always a prefix of what was
 * queued: a later key is never stored while an earlier one is not. After a failed batch nothing more is
 * stored; every later mutation is refused with the same error.
 */
export class KeyWriteQueue {
  /** The batch taking mutations now (null: none queued since the last one left). */
  private open: Batch | null = null;
  /** The batch being written now. */
  private writing: Batch | null = null;
  private failure: { error: unknown } | null = null;

  constructor(private readonly write: (mutations: KeyMutation[]) => Promise<void>) {}

  /** Queues `mutations` (a later value of a key replaces an earlier one not yet written); resolves once they are stored. */
  enqueue(mutations: ReadonlyArray<KeyMutation>): Promise<void> {
    if (this.failure) return this.refusal();
    const batch = (this.open ??= this.newBatch());
    for (const mutation of mutations) {
      const key = mutationKey(mutation.type, mutation.id);
      // Re-inserted at the end: a batch's mutations stay in the order of their last change.
      batch.mutations.delete(key);
      batch.mutations.set(key, mutation);
    }
    this.next();
    return batch.stored;
  }

  /** Resolves once every mutation queued so far is stored; rejects if one of them could not be. */
  stored(): Promise<void> {
    if (this.failure) return this.refusal();
    return (this.open ?? this.writing)?.stored ?? Promise.resolve();
  }

  /** Mutations queued or being written. */
  get size(): number {
    return (this.open?.mutations.size ?? 0) + (this.writing?.mutations.size ?? 0);
  }

  /** A batch failed or the queue was closed: nothing more is stored. */
  get refused(): boolean {
    return this.failure !== null;
  }

  /** Whether a write is under way or queued. */
  get busy(): boolean {
    return this.open !== null || this.writing !== null;
  }

  /** The newest value queued or being written for a key, if any (`value: null` is a deletion): newer than the database's. */
  pending(type: string, id: string): KeyMutation | undefined {
    const key = mutationKey(type, id);
    return this.open?.mutations.get(key) ?? this.writing?.mutations.get(key);
  }

  /** Refuses what is queued and not yet being written (the store was closed); the write under way finishes. */
  refuse(error: unknown): void {
    this.failure ??= { error };
    const open = this.open;
    this.open = null;
    open?.reject(error);
  }

  /**
   * The failure, as a rejected promise nobody has to read: a receipt held for a message that is never
   * stored (the session ended) keeps it unread, and an unread rejection would end the process
   * (session-lifecycle.e2e: a logout from the phone while messages were held).
   */
  private refusal(): Promise<void> {
    const refused = Promise.reject((this.failure as { error: unknown }).error);
    refused.catch(() => undefined);
    return refused;
  }

  private newBatch(): Batch {
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const stored = new Promise<void>((yes, no) => ((resolve = yes), (reject = no)));
    // A mutation that went on without waiting (a decrypt's commit) learns of a failure through the
    // store's own failure handling, not through this promise.
    stored.catch(() => undefined);
    return { mutations: new Map(), stored, resolve, reject };
  }

  private next(): void {
    if (this.writing || !this.open) return;
    const batch = (this.writing = this.open);
    this.open = null;
    this.write([...batch.mutations.values()]).then(
      () => {
        this.writing = null;
        batch.resolve();
        this.next();
      },
      (error: unknown) => {
        this.writing = null;
        batch.reject(error);
        // Nothing queued after a batch that failed may be stored (only a prefix of the queue is durable).
        this.refuse(error);
      },
    );
  }
}
