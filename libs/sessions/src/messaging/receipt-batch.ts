import { MessageRepository, type MessageRow } from '@gw/persistence';
import type { EntityManager } from 'typeorm';

interface Pending {
  instanceId: string;
  messageIds: string[];
  status: string;
  resolve: (rows: MessageRow[]) => void;
  reject: (error: unknown) => void;
}

const batches = new WeakMap<EntityManager, ReceiptBatch>();

/**
 * The receipts of one inbound group transaction in one statement (ADR 0013). The group runs its writes
 * one after the other; a write that reaches a receipt's status change (`advanceStatus`) parks there,
 * and the group goes on with the next write. The parked changes run together, as one statement, before
 * the next write of an instance that has one parked (so an instance's writes keep their order) and at
 * the end of the group; each parked write then goes on with its rows. Outside a group (a write alone)
 * the change is its own statement, as before.
 */
export class ReceiptBatch {
  private pending: Pending[] = [];
  private parked: (() => void) | null = null;
  private running: string | null = null;

  private constructor(private readonly manager: EntityManager) {}

  /** A status change through the group's batch when the manager is a group's, else at once. */
  static advanceStatus(manager: EntityManager, instanceId: string, messageIds: string[], status: string): Promise<MessageRow[]> {
    const batch = batches.get(manager);
    if (!batch) return MessageRepository.advanceStatusWithin(manager, instanceId, messageIds, status);
    return batch.add(instanceId, messageIds, status);
  }

  /** Opens the batch of a group transaction's manager; `close` when the group is done. */
  static open(manager: EntityManager): ReceiptBatch {
    const batch = new ReceiptBatch(manager);
    batches.set(manager, batch);
    return batch;
  }

  close(error?: unknown): void {
    batches.delete(this.manager);
    for (const entry of this.pending.splice(0)) entry.reject(error ?? new Error('group transaction ended'));
  }

  /** Whether a change of this instance is parked (its next write must wait for the flush). */
  hasPending(instanceId: string): boolean {
    return this.pending.some((entry) => entry.instanceId === instanceId);
  }

  /** Runs one write of `instanceId` until it finishes or parks at a status change (`parked`: settled after a flush). */
  async run<T>(instanceId: string, work: () => Promise<T>): Promise<{ done: Promise<T>; parked: boolean }> {
    let parked = false;
    const parkedSignal = new Promise<void>((resolve) => (this.parked = resolve));
    this.running = instanceId;
    const done = work();
    try {
      await Promise.race([
        done.then(
          () => undefined,
          () => undefined,
        ),
        parkedSignal.then(() => void (parked = true)),
      ]);
    } finally {
      this.running = null;
      this.parked = null;
    }
    return { done, parked };
  }

  /** Writes every parked change in one statement and hands each parked write its rows. */
  async flush(): Promise<void> {
    const entries = this.pending.splice(0);
    if (entries.length === 0) return;
    let rows: MessageRow[];
    try {
      rows = await MessageRepository.advanceStatusManyWithin(this.manager, entries);
    } catch (error) {
      for (const entry of entries) entry.reject(error);
      throw error;
    }
    for (const entry of entries) entry.resolve(rows.filter((row) => row.instanceId === entry.instanceId));
  }

  private add(instanceId: string, messageIds: string[], status: string): Promise<MessageRow[]> {
    if (this.running !== instanceId || !this.parked) {
      // Only a write the group is running may park (once); anything else runs at once.
      return MessageRepository.advanceStatusWithin(this.manager, instanceId, messageIds, status);
    }
    const parked = this.parked;
    return new Promise<MessageRow[]>((resolve, reject) => {
      this.pending.push({ instanceId, messageIds, status, resolve, reject });
      parked();
    });
  }
}
