import type { Logger } from '@gw/platform';
import type { SignalDataSet, SignalKeyStore, SignalKeyType } from '../baileys';

/** The Signal key store's type under which plaintexts are kept (auth_keys.type), beside sessions and pre-keys. */
export const RECEIVED_PLAINTEXT = 'received-plaintext';
/** Deletions of plaintexts whose messages are stored are written together, this often at most. */
const FORGET_EVERY_MS = 1_000;

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
  private forgetting: string[] = [];
  private timer?: NodeJS.Timeout;

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

  /** The messages are stored: their plaintexts go, with others of the next second. */
  forget(hashes: readonly string[]): void {
    if (hashes.length === 0 || !this.keys) return;
    this.forgetting.push(...hashes);
    this.timer ??= setTimeout(() => void this.flush(), FORGET_EVERY_MS);
    this.timer.unref?.();
  }

  /** Writes the pending deletions now (also when the socket goes). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const hashes = this.forgetting;
    this.forgetting = [];
    if (hashes.length === 0 || !this.keys) return;
    try {
      await this.keys.set({ [RECEIVED_PLAINTEXT]: Object.fromEntries(hashes.map((hash) => [hash, null])) } as unknown as SignalDataSet);
    } catch (error) {
      // The session ended or lost its lease: the rows stay until the instance's keys are next cleared
      // (a logout); a later holder never reads them unless WhatsApp delivers the same ciphertext again.
      this.logger.debug({ err: error, count: hashes.length }, 'plaintexts of stored messages not deleted');
    }
  }
}
