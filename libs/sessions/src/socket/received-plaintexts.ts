import type { Logger } from '@gw/platform';
import type { SignalDataSet, SignalKeyStore, SignalKeyType } from '../baileys';

/** The Signal key store's type under which plaintexts are kept (auth_keys.type), beside sessions and pre-keys. */
export const RECEIVED_PLAINTEXT = 'received-plaintext';
/** Deletions of plaintexts whose messages are stored are written together, this often at most. */
const FORGET_EVERY_MS = 1_000;
/**
 * A plaintext is deleted only once its message's receipt has been out this long with the socket still
 * open. A receipt "sent" is a frame written to our socket, not one WhatsApp has read: a socket that
 * closes right after (a drain's hand-over stores the backlog, sends its receipts and closes within a
 * second) can lose it, and WhatsApp then delivers the message again to the heir, which can read that
 * copy only from the plaintext (bench/cluster run 55: "No matching sessions found" at the heir 3.4 s
 * after the hand-over, no plaintext kept, no message dropped by the drain).
 */
export const RECEIPT_SETTLE_MS = 3_000;

/**
 * The plaintext of every message one socket decrypted and we have not yet stored, kept durably in the
 * same key transaction that moves the Signal session past its key (ADR 0035).
 *
 * A message's receipt waits for its write (HeldAcks), so a worker that dies before the write leaves it
 * unreceipted, and WhatsApp delivers it again on the next connection. But the decrypt had already
 * stored the session past the message's key: the copy delivered again fails with "Key used already or
 * never filled", which Baileys answers with a nack, and the message is gone after all. whatsmeow keeps
 * the plaintext by ciphertext hash in its database, in the transaction of the decrypt, for exactly this
 * (its event buffer, `bufferedDecrypt`); this is that, in our Signal key store: the copy delivered again
 * is decrypted from here. Once the message is stored its plaintext is deleted (batched, FORGET_EVERY_MS).
 */
export class ReceivedPlaintexts {
  private keys?: SignalKeyStore;
  /** Hashes kept since the last message handed its receipt over (HeldAcks.hold takes them). */
  private recent: string[] = [];
  /** Hashes of stored messages and when their receipts went, oldest first. */
  private forgetting: Array<{ hash: string; at: number }> = [];
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly logger: Logger) {}

  /** The socket's key store (with Baileys' transactions), once Baileys builds its Signal repository. */
  attach(keys: SignalKeyStore): void {
    this.keys = keys;
  }

  /** Inside the decrypt's key transaction: committed with the session it moved, or not at all. */
  async keep(hash: string, plaintext: Uint8Array): Promise<void> {
    if (!this.keys) return;
    await this.keys.set({ [RECEIVED_PLAINTEXT]: { [hash]: Buffer.from(plaintext) } } as unknown as SignalDataSet);
    this.recent.push(hash);
  }

  /** The plaintext kept for a ciphertext decrypted before (by this or an earlier socket, of any worker). */
  async recall(hash: string): Promise<Uint8Array | undefined> {
    if (!this.keys) return undefined;
    const found = await this.keys.get(RECEIVED_PLAINTEXT as SignalKeyType, [hash]);
    const value = (found as Record<string, unknown>)[hash];
    return value instanceof Uint8Array ? value : undefined;
  }

  /** A copy delivered again was decrypted from a kept plaintext: it goes once this copy is stored. */
  recalled(hash: string): void {
    if (this.keys) this.recent.push(hash);
  }

  /** The hashes decrypted since the last call: the message now being handed over (decrypts run one at a time per socket). */
  takeRecent(): string[] {
    const taken = this.recent;
    this.recent = [];
    return taken;
  }

  /**
   * The messages are stored and their receipts went: their plaintexts go once the receipts have been
   * out RECEIPT_SETTLE_MS with the socket open, with others of the same second.
   */
  forget(hashes: readonly string[], now = Date.now()): void {
    if (hashes.length === 0 || !this.keys || this.closed) return;
    for (const hash of hashes) this.forgetting.push({ hash, at: now });
    this.schedule();
  }

  /**
   * The socket closed: nothing more is deleted. Receipts that went in its last RECEIPT_SETTLE_MS may not
   * have reached WhatsApp, so their plaintexts stay for the copies it may deliver to the next holder (a
   * few rows per hand-over, deleted by the retention purge once WhatsApp no longer delivers them again,
   * or with the rest of the keys at a logout).
   */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.forgetting.length > 0) this.logger.debug({ count: this.forgetting.length }, 'plaintexts of recently receipted messages kept at the close');
    this.forgetting = [];
  }

  private schedule(): void {
    if (this.timer || this.forgetting.length === 0) return;
    const due = Math.max(FORGET_EVERY_MS, this.forgetting[0].at + RECEIPT_SETTLE_MS - Date.now());
    this.timer = setTimeout(() => void this.flush(), due);
    this.timer.unref?.();
  }

  /** Writes the deletions that are due: plaintexts whose receipts have been out RECEIPT_SETTLE_MS, the socket open all along. */
  async flush(now = Date.now()): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.closed) return;
    const notDue = this.forgetting.findIndex((entry) => now - entry.at < RECEIPT_SETTLE_MS);
    const due = this.forgetting.splice(0, notDue === -1 ? this.forgetting.length : notDue);
    this.schedule();
    const hashes = due.map((entry) => entry.hash);
    if (hashes.length === 0 || !this.keys) return;
    try {
      // Keyed by hashes never seen before: an object without a prototype holds them as a dictionary from
      // the start, where a literal (or Object.fromEntries) made a hidden class per key first (~2 KB a
      // key: most of what a busy account's flush allocated, bench/inbound's heap profile).
      const deletions: Record<string, null> = Object.create(null);
      for (const hash of hashes) deletions[hash] = null;
      await this.keys.set({ [RECEIVED_PLAINTEXT]: deletions } as unknown as SignalDataSet);
    } catch (error) {
      // The session ended or lost its lease: the rows stay until the retention purge or a logout; a later
      // holder never reads them unless WhatsApp delivers the same ciphertext again.
      this.logger.debug({ err: error, count: hashes.length }, 'plaintexts of stored messages not deleted');
    }
  }
}
