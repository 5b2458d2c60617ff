import type { Logger } from '@gw/platform';
import { DEFAULT_CONNECTION_CONFIG, type WAMessage, type WASocket } from '../baileys';
import type { ReceivedPlaintexts } from './received-plaintexts';

type SendAck = () => Promise<void>;

/**
 * The delivery receipts of received messages, held until the messages are stored (ADR 0035).
 *
 * WhatsApp counts a message delivered to a device when the device sends its receipt, and from then on
 * never gives it to that device (or whoever holds the instance next) again. Baileys 7.0.0-rc14 sends
 * the receipt inside its message handler, before it emits `messages.upsert`, so a worker killed between
 * the receipt and our write lost the message for good (bench/cluster, kill -9: 52 of 1,430). Our patch
 * of Baileys (patches/, option `deferMessageAck`) hands the receipt here instead; the inbound handler
 * sends it once the message's write has committed. A message whose write never commits (the process
 * died, the lease moved, the write failed) stays unreceipted: WhatsApp keeps it and delivers it again
 * on the next connection, as whatsmeow's `SynchronousAck` relies on, and the write is idempotent by
 * message id (ADR 0034), so a message stored twice is written once.
 */
export class HeldAcks {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly logger: Logger,
    /** The plaintexts kept for the messages decrypted (deleted once they are stored). */
    private readonly plaintexts?: ReceivedPlaintexts,
    /**
     * Resolves once the Signal keys written so far are stored (PostgresAuthState.keysStored). A decrypt's
     * key commit goes on before it is stored (ADR 0048), so a receipt also waits for the keys its
     * decrypt moved and the plaintext kept with them: a receipt never goes out for a message whose
     * session step and plaintext could still be lost.
     */
    private readonly keysStored?: () => Promise<void>,
  ) {}

  /** The inbound handler's gate: undefined while its queue has room, else a promise of room (ADR 0048). */
  private gate?: () => Promise<void> | undefined;
  /** Baileys' message handler is waiting for the gate now. */
  private waiting = 0;

  /** Set by the socket's inbound handler: Baileys' message handler waits for room after each message it holds. */
  setGate(gate: () => Promise<void> | undefined): void {
    this.gate = gate;
  }

  /** Whether Baileys' message handler is waiting for the inbound queue's room (not for a frame: SocketReader). */
  get waitingForRoom(): boolean {
    return this.waiting > 0;
  }

  /**
   * Baileys' `deferMessageAck`: keeps the receipt of a message it just decrypted. Answers a promise
   * Baileys' message handler awaits once it emitted the message, when the socket's inbound queue is full.
   */
  hold(message: WAMessage, send: SendAck): Promise<void> | undefined {
    this.keep(message, send);
    const room = this.gate?.();
    if (!room) return undefined;
    this.waiting++;
    return room.finally(() => this.waiting--);
  }

  private keep(message: WAMessage, send: SendAck): void {
    // Baileys decrypts one stanza at a time per socket and hands its receipt over before the next.
    const plaintexts = this.plaintexts?.takeRecent() ?? [];
    // The keys this decrypt moved were handed to the store before the receipt was: this covers them.
    const keys = this.keysStored?.() ?? Promise.resolve();
    const key = heldAckKey(message);
    if (!key) {
      void this.receipt({ sends: [send], plaintexts, keys }, message);
      return;
    }
    const entry = this.held.get(key);
    if (entry) {
      entry.sends.push(send);
      entry.plaintexts.push(...plaintexts);
      entry.keys = keys;
    } else this.held.set(key, { sends: [send], plaintexts, keys });
  }

  /** The message is stored: its receipt goes now. A message with no receipt held is nothing to do. */
  release(message: WAMessage): void {
    const key = heldAckKey(message);
    const entry = key ? this.held.get(key) : undefined;
    if (!key || !entry) return;
    this.held.delete(key);
    void this.receipt(entry, message);
  }

  /** Receipts held now (messages decrypted and not yet stored). */
  get size(): number {
    return this.held.size;
  }

  /** The kept plaintexts' hashes of the messages held now: what the next holder must find when they come again. */
  heldPlaintexts(): string[] {
    return [...this.held.values()].flatMap((entry) => entry.plaintexts);
  }

  /**
   * Sends the message's receipts; its plaintexts are deleted only once they went. A receipt that could
   * not be sent (the socket closed after the write: a drain's hand-over, issue #39) leaves the message
   * to come again on the next connection, the heir's, which can only read that copy from the plaintext
   * kept (the Signal session moved past it): deleted, the heir failed to decrypt it and both sides'
   * sessions diverged (bench/cluster rolling, a drain that closed its sockets before storing: 972
   * decrypt failures at the phones).
   */
  private async receipt(entry: Held, message: WAMessage): Promise<void> {
    try {
      await entry.keys;
    } catch (error) {
      // The session has stopped (a key write failed, the lease moved, the socket closed first): with no
      // receipt, WhatsApp delivers the message again, and the keys as stored decrypt it again.
      this.logger.debug({ err: error, id: message.key?.id }, 'a stored message is not receipted: the keys its decrypt moved were not stored');
      return;
    }
    const sent = await Promise.all(entry.sends.map((send) => this.sendNow(send, message)));
    if (sent.every(Boolean)) this.plaintexts?.forget(entry.plaintexts);
  }

  private async sendNow(send: SendAck, message: WAMessage): Promise<boolean> {
    try {
      await send();
      return true;
    } catch (error) {
      // The socket closed after the write: the message is stored, and WhatsApp, which has no receipt,
      // gives it again on the next connection, where the idempotent write finds it and receipts it.
      this.logger.debug({ err: error, id: message.key?.id }, 'the receipt of a stored message could not be sent');
      return false;
    }
  }
}

/** A received message's receipts held, the plaintexts kept for it, and its decrypt's keys being stored. */
interface Held {
  sends: SendAck[];
  plaintexts: string[];
  keys: Promise<void>;
}

/** What identifies a received message between Baileys' hold and our write: its chat, id and sender. */
export function heldAckKey(message: WAMessage): string | undefined {
  const { remoteJid, id, participant, fromMe } = message.key ?? {};
  if (!id) return undefined;
  return `${remoteJid ?? ''}\u0000${id}\u0000${participant ?? ''}\u0000${fromMe ? 1 : 0}`;
}

const bySocket = new WeakMap<object, HeldAcks>();

/** Socket options that make Baileys hand its receipts to `acks`; throws when Baileys is not patched. */
export function deferringAcks(acks: HeldAcks): { deferMessageAck: (message: WAMessage, send: SendAck) => Promise<void> | undefined } {
  assertAcksCanBeHeld();
  return { deferMessageAck: (message, send) => acks.hold(message, send) };
}

/** Remembers which socket's receipts `acks` holds (the inbound handler finds them by its socket). */
export function rememberHeldAcks(socket: WASocket, acks: HeldAcks): void {
  bySocket.set(socket, acks);
}

/** The receipts held for a socket built by SocketFactory; undefined for any other socket. */
export function heldAcksOf(socket: object): HeldAcks | undefined {
  return bySocket.get(socket);
}

/**
 * The patch is applied by `npm ci` (postinstall: patch-package). Without it Baileys would ignore the
 * option and receipt every message before it is stored: refuse to run rather than lose that silently.
 */
export function assertAcksCanBeHeld(): void {
  if (!('deferMessageAck' in DEFAULT_CONNECTION_CONFIG)) {
    throw new Error(
      'Baileys is not patched (patches/@whiskeysockets+baileys+*.patch): run `npm ci` without --ignore-scripts, or `npx patch-package`; without it received messages could be lost when a worker dies',
    );
  }
}
