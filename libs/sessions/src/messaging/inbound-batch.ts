import {
  ChatRepository,
  InboundGroupRepository,
  MessageRepository,
  type ChatObservation,
  type ChatRow,
  type NewMessage,
  type OwnCopy,
  type StatusChange,
} from '@gw/persistence';
import type { EntityManager } from 'typeorm';

type Pending =
  | { kind: 'status'; instanceId: string; messageIds: string[]; status: string; resolve: (rows: StatusChange[]) => void; reject: (error: unknown) => void }
  | { kind: 'copy'; instanceId: string; message: NewMessage; resolve: (copy: OwnCopy) => void; reject: (error: unknown) => void }
  | {
      kind: 'chat';
      instanceId: string;
      observation: ChatObservation;
      newId: () => string;
      resolve: (chat: ChatRow) => void;
      reject: (error: unknown) => void;
    };

const batches = new WeakMap<EntityManager, InboundBatch>();

/**
 * The hot inbound writes of one group transaction, all kinds of a round in one statement (ADR 0013,
 * 0017, 0019): receipts' status changes, the copies of our own sent messages, and the chats'
 * last-message updates.
 * The group runs its writes one after the other, in waves (each instance's first write, then each
 * one's next: InboundStore); a write that reaches one of these statements parks there, and the group
 * goes on with the next write. The parked statements run together, in one statement (a round), at the
 * end of each wave (so an instance's writes keep their order); each parked write then goes on with its
 * rows, and may park again at its next such statement (a sent message's copy, then its chat), until it
 * is done. Outside a group (a write alone) each is its own statement, as before.
 */
export class InboundBatch {
  private pending: Pending[] = [];
  /** The instances whose write may park now (the group is waiting for it), each with the signal that it did. */
  private readonly slots = new Map<string, () => void>();

  private constructor(private readonly manager: EntityManager) {}

  /** MessageRepository.advanceStatusWithin, through the group's batch when the manager is a group's. */
  static advanceStatus(manager: EntityManager, instanceId: string, messageIds: string[], status: string): Promise<StatusChange[]> {
    const batch = batches.get(manager);
    if (!batch?.slots.has(instanceId)) return MessageRepository.advanceStatusWithin(manager, instanceId, messageIds, status);
    return new Promise((resolve, reject) => batch.park({ kind: 'status', instanceId, messageIds, status, resolve, reject }));
  }

  /** MessageRepository.storeOwnCopyWithin, through the group's batch when the manager is a group's. */
  static storeOwnCopy(manager: EntityManager, message: NewMessage): Promise<OwnCopy> {
    const batch = batches.get(manager);
    if (!batch?.slots.has(message.instanceId)) return MessageRepository.storeOwnCopyWithin(manager, message);
    return new Promise((resolve, reject) => batch.park({ kind: 'copy', instanceId: message.instanceId, message, resolve, reject }));
  }

  /** ChatRepository.observeWithin (the chat row afterwards), through the group's batch when the manager is a group's. */
  static observeChat(manager: EntityManager, instanceId: string, observation: ChatObservation, newId: () => string): Promise<ChatRow> {
    const batch = batches.get(manager);
    if (!batch?.slots.has(instanceId)) return ChatRepository.observeWithin(manager, instanceId, observation, newId).then(({ chat }) => chat);
    return new Promise((resolve, reject) => batch.park({ kind: 'chat', instanceId, observation, newId, resolve, reject }));
  }

  /** Opens the batch of a group transaction's manager; `close` when the group is done. */
  static open(manager: EntityManager): InboundBatch {
    const batch = new InboundBatch(manager);
    batches.set(manager, batch);
    return batch;
  }

  close(error?: unknown): void {
    batches.delete(this.manager);
    this.slots.clear();
    for (const entry of this.pending.splice(0)) entry.reject(error ?? new Error('group transaction ended'));
  }

  /** Runs one write of `instanceId` until it finishes or parks (`parked`: its promise settles after a flush). */
  async run<T>(instanceId: string, work: () => Promise<T>): Promise<{ done: Promise<T>; parked: boolean }> {
    const parkedSignal = this.arm(instanceId);
    const done = work();
    return { done, parked: await this.finishesOrParks(instanceId, done, parkedSignal) };
  }

  /**
   * Writes every parked statement, one per kind, and hands each parked write its result; then waits
   * until each of them has finished or parked again. Answers the instances whose write parked again
   * (the group flushes once more for them). A failed statement fails every parked write and throws.
   */
  async flush(writes: ReadonlyArray<{ instanceId: string; done: Promise<unknown> }>): Promise<Set<string>> {
    const entries = this.pending.splice(0);
    const again = new Map<string, Promise<void>>();
    // A write goes on once its entry is resolved: it may park again from then on.
    const resolving = <T>(entry: { instanceId: string; resolve: (value: T) => void }, value: T) => {
      again.set(entry.instanceId, this.arm(entry.instanceId));
      entry.resolve(value);
    };
    const statuses = entries.filter((entry) => entry.kind === 'status');
    const copies = entries.filter((entry) => entry.kind === 'copy');
    const chats = entries.filter((entry) => entry.kind === 'chat');
    try {
      // One statement for the round, whatever kinds it holds (ADR 0019).
      const written = await InboundGroupRepository.writeWithin(this.manager, {
        statuses,
        copies: copies.map((entry) => entry.message),
        chats,
      });
      // Every write succeeded: only now do the parked writes go on (none writes while the round could still fail).
      for (const entry of statuses)
        resolving(
          entry,
          written.statuses.filter((row) => row.instanceId === entry.instanceId),
        );
      copies.forEach((entry, index) => resolving(entry, written.copies[index]));
      chats.forEach((entry, index) => resolving(entry, written.chats[index]));
    } catch (error) {
      for (const entry of entries) entry.reject(error);
      throw error;
    }
    const parkedAgain = new Set<string>();
    await Promise.all(
      writes.map(async ({ instanceId, done }) => {
        const signal = again.get(instanceId);
        if (signal && (await this.finishesOrParks(instanceId, done, signal))) parkedAgain.add(instanceId);
      }),
    );
    return parkedAgain;
  }

  /** Lets the write of `instanceId` park; the promise resolves when it does. */
  private arm(instanceId: string): Promise<void> {
    return new Promise<void>((resolve) => this.slots.set(instanceId, resolve));
  }

  /** Whether the write parked (true) or finished (false, either way); its slot is closed then. */
  private async finishesOrParks(instanceId: string, done: Promise<unknown>, parkedSignal: Promise<void>): Promise<boolean> {
    let parked = false;
    try {
      await Promise.race([
        done.then(
          () => undefined,
          () => undefined,
        ),
        parkedSignal.then(() => void (parked = true)),
      ]);
    } finally {
      this.slots.delete(instanceId);
    }
    return parked;
  }

  private park(entry: Pending): void {
    const parked = this.slots.get(entry.instanceId) as () => void;
    this.slots.delete(entry.instanceId);
    this.pending.push(entry);
    parked();
  }
}
