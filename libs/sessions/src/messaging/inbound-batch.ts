import { MessageRepository, type MessageRow, type NewMessage } from '@gw/persistence';
import type { EntityManager } from 'typeorm';

type OwnCopy = { row: MessageRow; created: boolean; advanced: boolean } | null;

type Pending =
  | { kind: 'status'; instanceId: string; messageIds: string[]; status: string; resolve: (rows: MessageRow[]) => void; reject: (error: unknown) => void }
  | { kind: 'copy'; instanceId: string; message: NewMessage; resolve: (copy: OwnCopy) => void; reject: (error: unknown) => void };

const batches = new WeakMap<EntityManager, InboundBatch>();

/**
 * The hot inbound writes of one group transaction, each kind in one statement (ADR 0013): receipts'
 * status changes, and the copies of our own sent messages. The group runs its writes one after the
 * other; a write that reaches one of these statements parks there, and the group goes on with the next
 * write. The parked statements run together, one per kind, before the next write of an instance that
 * has one parked (so an instance's writes keep their order) and at the end of the group; each parked
 * write then goes on with its rows. Outside a group (a write alone) each is its own statement, as before.
 */
export class InboundBatch {
  private pending: Pending[] = [];
  private parked: (() => void) | null = null;
  private running: string | null = null;

  private constructor(private readonly manager: EntityManager) {}

  /** MessageRepository.advanceStatusWithin, through the group's batch when the manager is a group's. */
  static advanceStatus(manager: EntityManager, instanceId: string, messageIds: string[], status: string): Promise<MessageRow[]> {
    const batch = batches.get(manager);
    if (!batch?.mayPark(instanceId)) return MessageRepository.advanceStatusWithin(manager, instanceId, messageIds, status);
    return new Promise((resolve, reject) => batch.park({ kind: 'status', instanceId, messageIds, status, resolve, reject }));
  }

  /** MessageRepository.storeOwnCopyWithin, through the group's batch when the manager is a group's. */
  static storeOwnCopy(manager: EntityManager, message: NewMessage): Promise<OwnCopy> {
    const batch = batches.get(manager);
    if (!batch?.mayPark(message.instanceId)) return MessageRepository.storeOwnCopyWithin(manager, message);
    return new Promise((resolve, reject) => batch.park({ kind: 'copy', instanceId: message.instanceId, message, resolve, reject }));
  }

  /** Opens the batch of a group transaction's manager; `close` when the group is done. */
  static open(manager: EntityManager): InboundBatch {
    const batch = new InboundBatch(manager);
    batches.set(manager, batch);
    return batch;
  }

  close(error?: unknown): void {
    batches.delete(this.manager);
    for (const entry of this.pending.splice(0)) entry.reject(error ?? new Error('group transaction ended'));
  }

  /** Whether a statement of this instance is parked (its next write must wait for the flush). */
  hasPending(instanceId: string): boolean {
    return this.pending.some((entry) => entry.instanceId === instanceId);
  }

  /** Runs one write of `instanceId` until it finishes or parks (`parked`: its promise settles after a flush). */
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

  /** Writes every parked statement, one per kind, and hands each parked write its result. */
  async flush(): Promise<void> {
    const entries = this.pending.splice(0);
    if (entries.length === 0) return;
    const statuses = entries.filter((entry) => entry.kind === 'status');
    const copies = entries.filter((entry) => entry.kind === 'copy');
    try {
      if (statuses.length > 0) {
        const rows = await MessageRepository.advanceStatusManyWithin(this.manager, statuses);
        for (const entry of statuses) entry.resolve(rows.filter((row) => row.instanceId === entry.instanceId));
      }
      if (copies.length > 0) {
        const stored = await MessageRepository.storeOwnCopiesWithin(
          this.manager,
          copies.map((entry) => entry.message),
        );
        copies.forEach((entry, index) => entry.resolve(stored[index]));
      }
    } catch (error) {
      for (const entry of entries) entry.reject(error);
      throw error;
    }
  }

  /** Only the write the group is running parks, and only once (anything else runs at once). */
  private mayPark(instanceId: string): boolean {
    return this.running === instanceId && this.parked !== null;
  }

  private park(entry: Pending): void {
    const parked = this.parked as () => void;
    this.pending.push(entry);
    parked();
  }
}
