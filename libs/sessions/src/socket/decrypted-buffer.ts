import { createHash } from 'node:crypto';
import type { Logger } from '@gw/platform';
import type { SignalKeyStore, UserFacingSocketConfig } from '../baileys';
import type { ReceivedPlaintexts } from './received-plaintexts';

type SignalRepositoryMaker = NonNullable<UserFacingSocketConfig['makeSignalRepository']>;
type SignalRepository = ReturnType<SignalRepositoryMaker>;

/** Plaintexts kept (the newest), and for how long: a redelivery comes with the next socket, seconds later. */
const LIMIT = 20_000;
const TTL_MS = 30 * 60_000;

/**
 * The plaintext of every message this worker decrypted lately, by instance, sender and a hash of the
 * ciphertext — so a message WhatsApp delivers again is decrypted again from here (issue 34: "every
 * message a phone sends is stored").
 *
 * Why: rc14 (messages-recv.js handleMessage) decrypts a message — which moves the Signal session past
 * its key and stores the session — then sends the delivery receipt, and only then emits the message.
 * When the connection closes in between (a restart, a lost keepalive, a 515, a socket cut with a send
 * in flight), the receipt throws "Connection Closed" and the message is never emitted; the server,
 * which got no receipt, delivers it again on the next socket, and that copy fails to decrypt with
 * "Key used already or never filled" (the key is spent), which rc14 answers with a nack and no stub.
 * The server then drops it: a message the phone shows as delivered (to the phone) that we never
 * stored. bench/chaos saw it under ack-lost (1 of 53 inbound) and, on the loaded machine, corrupt.
 * whatsmeow avoids the same trap by buffering the decrypted plaintext by ciphertext hash before it
 * acks (its event buffer, `bufferedDecrypt`); this is that buffer, in memory, in front of the durable
 * one (ReceivedPlaintexts, ADR 0035), which also serves a worker that died between the decrypt and the
 * store and the worker that took its instances over.
 *
 * Only a failing decrypt looks here: a message that decrypts normally is only remembered.
 */
export class DecryptedBuffer {
  private readonly entries = new Map<string, { plaintext: Uint8Array; at: number }>();

  constructor(
    private readonly limit = LIMIT,
    private readonly ttlMs = TTL_MS,
  ) {}

  static key(instanceId: string, sender: string, ciphertext: Uint8Array): string {
    return `${instanceId}\u0000${sender}\u0000${createHash('sha256').update(ciphertext).digest('base64')}`;
  }

  /**
   * Keeps a copy of its own: libsignal's plaintext is a view into Node's shared 8 KiB buffer pool
   * (Buffer.concat), so keeping the view kept the whole slab alive — up to 8 KiB for a text of a hundred
   * bytes, times LIMIT. bench/instances' 30-minute soak at N = 1,000 (one message a minute each way) saw
   * the worker's RSS climb ~70 MB while this buffer filled, then stay flat.
   */
  remember(key: string, plaintext: Uint8Array): void {
    this.entries.delete(key);
    this.entries.set(key, { plaintext: ownCopy(plaintext), at: Date.now() });
    while (this.entries.size > this.limit) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  recall(key: string): Uint8Array | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (Date.now() - entry.at > this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.plaintext;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Baileys' signal repository maker, its 1:1 and group decrypts going through this buffer for one
   * instance: a success is remembered; a failure whose ciphertext was decrypted before answers the
   * plaintext it had then (the same bytes from the same sender are the same message).
   */
  wrap(instanceId: string, make: SignalRepositoryMaker, logger?: Logger, durable?: ReceivedPlaintexts): SignalRepositoryMaker {
    return (...args) => {
      const repository: SignalRepository = make(...args);
      const keys = durable
        ? (args[0]?.keys as (SignalKeyStore & { transaction?: <T>(work: () => Promise<T>, key: string) => Promise<T> }) | undefined)
        : undefined;
      const transaction = keys?.transaction?.bind(keys);
      if (durable && keys && transaction) durable.attach(keys);
      const kept = durable && transaction ? durable : undefined;
      // The durable plaintext is written in the transaction Baileys opens for the decrypt (the same key, so the
      // same lock: its own transaction then joins this one), so it commits with the session it moved.
      const inTransaction = <T>(key: string, work: () => Promise<T>) => (kept && transaction ? transaction(work, key) : work());
      const decryptMessage = repository.decryptMessage.bind(repository);
      const decryptGroupMessage = repository.decryptGroupMessage.bind(repository);
      repository.decryptMessage = async (opts) => {
        const key = DecryptedBuffer.key(instanceId, opts.jid, opts.ciphertext);
        return inTransaction(opts.jid, () => this.through(key, () => decryptMessage(opts), logger, kept));
      };
      repository.decryptGroupMessage = async (opts) => {
        const key = DecryptedBuffer.key(instanceId, `${opts.group}\u0000${opts.authorJid}`, opts.msg);
        return inTransaction(opts.group, () => this.through(key, () => decryptGroupMessage(opts), logger, kept));
      };
      return repository;
    };
  }

  private async through(key: string, decrypt: () => Promise<Uint8Array>, logger?: Logger, durable?: ReceivedPlaintexts): Promise<Uint8Array> {
    // The durable key: a hash of the instance, the sender and the ciphertext's hash (text without NULs, for Postgres).
    const hash = durable ? createHash('sha256').update(key).digest('base64url') : '';
    try {
      const plaintext = await decrypt();
      this.remember(key, plaintext);
      await durable?.keep(hash, plaintext);
      return plaintext;
    } catch (error) {
      const known = this.recall(key) ?? (await durable?.recall(hash).catch(() => undefined));
      const plaintext = hash ? hash.slice(0, 16) : undefined;
      if (!known) {
        // Baileys answers with a retry receipt (the sender re-encrypts on a new session) or a nack. A copy
        // delivered again after a hand-over lands here when its plaintext was not kept (issue #39): the
        // hash says which decrypt, on which worker, should have kept it.
        logger?.warn(
          { err: (error as Error)?.message, plaintext, kept: Boolean(durable) },
          'a received message failed to decrypt and no plaintext was kept for it',
        );
        throw error;
      }
      // Deleted with the rest once this copy is stored.
      durable?.recalled(hash);
      // Rare outside a hand-over or a crash (info: bench/cluster counts these against the warnings above).
      logger?.info({ err: (error as Error)?.message, plaintext }, 'a message delivered again was decrypted before: its plaintext from the buffer');
      return known;
    }
  }
}

/** The worker's buffer, shared by its instances' sockets (a socket lives until the next reconnect; the buffer must outlive it). */
export const decryptedBuffer = new DecryptedBuffer();

/** The bytes in a buffer of their own (a new Uint8Array, never from the pool), unless they already fill theirs. */
function ownCopy(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}
