import type {
  ChatRepository,
  ContactRepository,
  ContactRow,
  InboundGroupRepository,
  MessageRepository,
  ChatObservation,
  ChatRow,
  NewMessage,
  OwnCopy,
  StatusChange,
  Tx,
} from '@gw/persistence';
import { AsyncLocalStorage } from 'node:async_hooks';

type Pending =
  | {
      kind: 'status';
      slot: number;
      instanceId: string;
      messageIds: string[];
      status: string;
      resolve: (rows: StatusChange[]) => void;
      reject: (error: unknown) => void;
    }
  | { kind: 'copy'; slot: number; instanceId: string; message: NewMessage; resolve: (copy: OwnCopy) => void; reject: (error: unknown) => void }
  | {
      kind: 'chat';
      slot: number;
      instanceId: string;
      observation: ChatObservation;
      newId: () => string;
      /** The message's author as its push name shows it, observed in the same round (ADR 0055), or none. */
      sender: SenderObservation | null;
      resolve: (observed: { chat: ChatRow; sender: SenderObserved | null }) => void;
      reject: (error: unknown) => void;
    };

/** A received message's author as its push name shows it; `key`: once()'s key for observing it so. */
export interface SenderObservation {
  key: string;
  pn: string;
  lid: string;
  pushName: string;
}

/** A sender's contact as observed: the row afterwards, and whether this observation changed it. */
export type SenderObserved = { contact: ContactRow; changed: boolean };

/** What a second observation of a sender in one wave answers: the first one's row, unchanged. */
export const unchanged = (first: SenderObserved): SenderObserved => ({ ...first, changed: false });

const batches = new WeakMap<Tx, InboundBatch>();
/** The slot of the group's write running now (InboundBatch.run): the statements a write reaches park under its own slot. */
const currentSlot = new AsyncLocalStorage<number>();

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
  /** This wave's observations made once (once()), by key. */
  private readonly observations = new Map<string, Promise<unknown>>();
  /** The writes (by slot: their place in the group) that may park now (the group is waiting for them), each with the signal that it did. */
  private readonly slots = new Map<number, () => void>();

  private constructor(
    private readonly tx: Tx,
    /** The group's repository bound within its transaction (the round's statement). */
    private readonly groups: InboundGroupRepository,
  ) {}

  /** `messages`' advanceStatus within `tx`, through the group's batch when `tx` is a group's. */
  static advanceStatus(messages: MessageRepository, tx: Tx, instanceId: string, messageIds: string[], status: string): Promise<StatusChange[]> {
    const [batch, slot] = InboundBatch.parking(tx);
    if (!batch) return messages.within(tx).advanceStatus(instanceId, messageIds, status);
    return new Promise((resolve, reject) => batch.park({ kind: 'status', slot, instanceId, messageIds, status, resolve, reject }));
  }

  /** `messages`' storeOwnCopy within `tx`, through the group's batch when `tx` is a group's. */
  static storeOwnCopy(messages: MessageRepository, tx: Tx, message: NewMessage): Promise<OwnCopy> {
    const [batch, slot] = InboundBatch.parking(tx);
    if (!batch) return messages.within(tx).storeOwnCopy(message);
    return new Promise((resolve, reject) => batch.park({ kind: 'copy', slot, instanceId: message.instanceId, message, resolve, reject }));
  }

  /** `chats`' observe within `tx` (the chat row afterwards), through the group's batch when `tx` is a group's. */
  static async observeChat(chats: ChatRepository, tx: Tx, instanceId: string, observation: ChatObservation, newId: () => string): Promise<ChatRow> {
    return (await InboundBatch.observeChatAndSender(chats, null, tx, instanceId, observation, newId, null)).chat;
  }

  /**
   * A message's chat (`chats`' observe: the row afterwards) and its author's contact as its push name
   * shows it (`contacts`' observe; `sender` null: not observed), within `tx`. Through the group's batch
   * when `tx` is a group's: the chat in the round's statement, the sender in a statement of the round's
   * own beside it (ADR 0055). Outside a batch, the sender (through once()) and then the chat, each its
   * own statement.
   */
  static async observeChatAndSender(
    chats: ChatRepository,
    contacts: ContactRepository | null,
    tx: Tx,
    instanceId: string,
    observation: ChatObservation,
    newId: () => string,
    sender: SenderObservation | null,
  ): Promise<{ chat: ChatRow; sender: SenderObserved | null }> {
    const [batch, slot] = InboundBatch.parking(tx);
    if (!batch) {
      const observed =
        sender && contacts
          ? await InboundBatch.once(
              tx,
              sender.key,
              () => contacts.within(tx).observe(instanceId, { jid: sender.pn, lid: sender.lid, pushName: sender.pushName }),
              unchanged,
            )
          : null;
      const { chat } = await chats.within(tx).observe(instanceId, observation, newId);
      return { chat, sender: observed };
    }
    // A sender this wave observed already (in a statement of its own through once(), or in an earlier
    // round) answers as a second observation would. A parked one is not shared through once(): a write
    // of the wave waiting for it outside the round would never park or finish (the group waits for every
    // write of the wave before it flushes); senders alike within one round are told apart at the flush.
    const first = sender ? (batch.observations.get(sender.key) as Promise<SenderObserved> | undefined) : undefined;
    const observed = await new Promise<{ chat: ChatRow; sender: SenderObserved | null }>((resolve, reject) =>
      batch.park({ kind: 'chat', slot, instanceId, observation, newId, sender: first ? null : sender, resolve, reject }),
    );
    return first ? { chat: observed.chat, sender: unchanged(await first) } : observed;
  }

  /**
   * An observation the writes of one wave make alike, made once (`observe`) for all of them: the others get
   * `again(first)`, what it would have answered them one after the other (a sender's contact: unchanged).
   * The waves put only writes that observe it alike together (waves(): `observe …` keys). Outside a group
   * transaction every write observes for itself.
   */
  static once<T>(tx: Tx, key: string, observe: () => Promise<T>, again: (first: T) => T): Promise<T> {
    const batch = batches.get(tx);
    if (!batch) return observe();
    const first = batch.observations.get(key) as Promise<T> | undefined;
    if (first) return first.then(again);
    const made = observe();
    batch.observations.set(key, made);
    return made;
  }

  /** A new wave of the group begins: what its writes observe is looked at again (once()). */
  startWave(): void {
    this.observations.clear();
  }

  /** The group's batch and the running write's slot, when that write may park now (else [null, -1]: run the statement alone). */
  private static parking(tx: Tx): [InboundBatch, number] | [null, -1] {
    const batch = batches.get(tx);
    const slot = currentSlot.getStore();
    return batch && slot !== undefined && batch.slots.has(slot) ? [batch, slot] : [null, -1];
  }

  /** Opens the batch of a group transaction (its `tx`); `close` when the group is done. */
  static open(tx: Tx, groups: InboundGroupRepository): InboundBatch {
    const batch = new InboundBatch(tx, groups.within(tx));
    batches.set(tx, batch);
    return batch;
  }

  close(error?: unknown): void {
    batches.delete(this.tx);
    this.slots.clear();
    for (const entry of this.pending.splice(0)) entry.reject(error ?? new Error('group transaction ended'));
  }

  /**
   * Runs one write until it finishes or parks (`parked`: its promise settles after a flush). `slot`
   * names the write in its group (its position): writes of one instance may share a round (InboundStore),
   * so a parked statement belongs to its write, not to its instance.
   */
  async run<T>(slot: number, work: () => Promise<T>): Promise<{ done: Promise<T>; parked: boolean }> {
    const parkedSignal = this.arm(slot);
    const done = currentSlot.run(slot, work);
    return { done, parked: await this.finishesOrParks(slot, done, parkedSignal) };
  }

  /**
   * Writes every parked statement, one per kind, and hands each parked write its result; then waits
   * until each of them has finished or parked again. Answers the slots of the writes that parked again
   * (the group flushes once more for them). A failed statement fails every parked write and throws.
   */
  async flush(writes: ReadonlyArray<{ slot: number; done: Promise<unknown> }>): Promise<Set<number>> {
    // In the group's order (the writes of a wave run at once and may park in any order): a chat two
    // observations found takes them in this order (InboundGroupRepository's h_fold, ADR 0051).
    const entries = this.pending.splice(0).sort((a, b) => a.slot - b.slot);
    const again = new Map<number, Promise<void>>();
    // A write goes on once its entry is resolved: it may park again from then on.
    const resolving = <T>(entry: { slot: number; resolve: (value: T) => void }, value: T) => {
      again.set(entry.slot, this.arm(entry.slot));
      entry.resolve(value);
    };
    const statuses = entries.filter((entry) => entry.kind === 'status');
    const copies = entries.filter((entry) => entry.kind === 'copy');
    const chats = entries.filter((entry) => entry.kind === 'chat');
    // The senders of the round, each observed once: a second write observing one alike takes the first's answer, unchanged.
    const senders: Array<{ instanceId: string } & SenderObservation> = [];
    const senderIndex = new Map<string, number>();
    for (const entry of chats)
      if (entry.sender && !senderIndex.has(entry.sender.key)) {
        senderIndex.set(entry.sender.key, senders.length);
        senders.push({ instanceId: entry.instanceId, ...entry.sender });
      }
    try {
      // One statement for the round, whatever kinds it holds (ADR 0019), and its senders' beside it (ADR 0055).
      const written = await this.groups.write({
        statuses,
        copies: copies.map((entry) => entry.message),
        chats,
        senders: senders.map(({ instanceId, pn, lid, pushName }) => ({ instanceId, pn, lid, pushName })),
      });
      // The rest of the wave finds them observed (once(), a later round).
      senders.forEach((sender, index) => this.observations.set(sender.key, Promise.resolve(written.senders[index])));
      // The first write observing a sender (in the group's order) gets its answer; the others, what a second observation would.
      const answered = new Set<string>();
      const senderOf = ({ sender }: { sender: SenderObservation | null }): SenderObserved | null => {
        if (!sender) return null;
        const observed = written.senders[senderIndex.get(sender.key) as number];
        if (answered.has(sender.key)) return unchanged(observed);
        answered.add(sender.key);
        return observed;
      };
      // Every write succeeded: only now do the parked writes go on (none writes while the round could still fail).
      // Each write's own messages' changes (an instance's writes of a round name different messages).
      for (const entry of statuses)
        resolving(
          entry,
          written.statuses.filter((row) => row.instanceId === entry.instanceId && entry.messageIds.includes(row.messageId)),
        );
      copies.forEach((entry, index) => resolving(entry, written.copies[index]));
      chats.forEach((entry, index) => resolving(entry, { chat: written.chats[index], sender: senderOf(entry) }));
    } catch (error) {
      for (const entry of entries) entry.reject(error);
      throw error;
    }
    const parkedAgain = new Set<number>();
    await Promise.all(
      writes.map(async ({ slot, done }) => {
        const signal = again.get(slot);
        if (signal && (await this.finishesOrParks(slot, done, signal))) parkedAgain.add(slot);
      }),
    );
    return parkedAgain;
  }

  /** Lets the write of `slot` park; the promise resolves when it does. */
  private arm(slot: number): Promise<void> {
    return new Promise<void>((resolve) => this.slots.set(slot, resolve));
  }

  /** Whether the write parked (true) or finished (false, either way); its slot is closed then. */
  private async finishesOrParks(slot: number, done: Promise<unknown>, parkedSignal: Promise<void>): Promise<boolean> {
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
      this.slots.delete(slot);
    }
    return parked;
  }

  private park(entry: Pending): void {
    const parked = this.slots.get(entry.slot) as () => void;
    this.slots.delete(entry.slot);
    this.pending.push(entry);
    parked();
  }
}
