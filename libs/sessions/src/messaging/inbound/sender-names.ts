import type { Tx } from '@gw/persistence';

export interface Written {
  /** The sender's identities it was written under (its phone number and LID). */
  ids: string[];
  pushName: string;
  /** The transaction that wrote it, until it is known to have committed. */
  tx: Tx | null;
}

/** Entries kept at most (a sender whose name Baileys did not announce again leaves one behind). */
const MAX_ENTRIES = 2_000;

/**
 * The push names the message path has just written for senders, so that the `contacts.update` that
 * Baileys emits right after each received message with a push name (`{ id, notify }`, from the same
 * message) is not written a second time: one statement less per received message.
 *
 * An entry covers an update only when the write that made it is part of the update's own transaction
 * (the same group transaction: they commit or roll back together) or has committed; it is used once,
 * and any other write of the sender's contact drops it, so it never stands for more than the one
 * message that made it.
 */
export class SenderNames {
  private readonly written = new Map<string, Written>();

  /**
   * The message path wrote `pushName` for the sender known by `ids` (its phone number and LID), in
   * `tx`'s transaction; hand what this answers to `committed` once that transaction committed.
   */
  wrote(tx: Tx, ids: string[], pushName: string): Written {
    if (this.written.size >= MAX_ENTRIES) this.written.clear();
    const entry = { ids: ids.filter(Boolean), pushName, tx };
    for (const id of entry.ids) this.written.set(id, entry);
    return entry;
  }

  /** The write that `wrote` answered `entry` for committed: it covers updates in later transactions too. */
  committed(entry: Written): void {
    entry.tx = null;
  }

  /**
   * Whether an update saying only that the sender known by `ids` has push name `pushName` repeats what
   * was written under all of those ids: by a committed transaction, or by `tx`'s own (null:
   * committed ones only). An entry
   * that covers is used up; so is one looked at from inside a transaction that it does not cover (a
   * look without a transaction keeps it for the look inside the update's write).
   */
  covers(tx: Tx | null, ids: string[], pushName: string): boolean {
    const entry = ids.map((id) => (id ? this.written.get(id) : undefined)).find(Boolean);
    if (!entry) return false;
    // Written under every identity the update now knows: an update that learned the sender's other one
    // (its LID or phone number, after the message was stored without it) still writes, to pair them.
    const covered = entry.pushName === pushName && (entry.tx === null || entry.tx === tx) && ids.every((id) => !id || entry.ids.includes(id));
    if (covered || tx !== null) this.forget([...ids, ...entry.ids]);
    return covered;
  }

  /** Another write of the contact known by `ids`: an earlier entry no longer says what the row holds. */
  forget(ids: string[]): void {
    for (const id of ids) {
      const entry = id ? this.written.get(id) : undefined;
      if (entry) for (const other of entry.ids) this.written.delete(other);
    }
  }
}
