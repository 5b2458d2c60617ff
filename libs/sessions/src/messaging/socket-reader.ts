import type { Logger } from '@gw/platform';
import type { SocketContext } from '../session/socket-observer';
import { heldAcksOf } from '../socket/held-acks';

/** Baileys finished no stanza for this long: those it holds may be waiting for a frame held here (inBaileys). */
const STANZAS_STALL_MS = 1_000;

/** How long a held frame waits at most before the next hand-over is tried (events of a frame land asynchronously). */
const PUMP_MS = 5;

/**
 * How long Baileys' keep-alive is told the socket's silence is ours (`readingHeld`) without a break:
 * after that its usual check applies again, and a socket still not read is closed as lost ~35 s later
 * and reconnects. A history storm's pause is minutes at most; a database out of reach for longer gets
 * sessions that try again, rather than sockets nobody has heard from for an hour.
 */
export const READING_HELD_MAX_MS = 10 * 60_000;

type Client = {
  emit(event: string | symbol, ...args: unknown[]): boolean;
  socket?: { pause?(): void; resume?(): void } | null;
  /**
   * Read by Baileys' keep-alive (our patch of Socket/socket.js): while it answers true, the server's
   * silence is ours (frames held, or the TCP socket not read), not a lost connection.
   */
  readingHeld?: () => boolean;
};

/** The worker's side of the backpressure (InboundBackpressure): its room in items, and what to do when it has none. */
export interface WorkerRoom {
  room(): number;
  /** The worker is full: pause this socket (resumed with the worker's others, a few at a time). */
  full(): void;
}

const UNBOUNDED: WorkerRoom = { room: () => Infinity, full: () => undefined };

/**
 * Reads one socket's frames at the pace its inbound queue drains (InboundBackpressure, ADR 0013).
 * Paused, it hands Baileys no more frames and the websocket stops reading its TCP socket (WhatsApp's
 * server keeps the rest); the frames it had read already are held before Baileys sees them (not
 * decrypted, not acknowledged to WhatsApp, so a crash loses none of them). Resumed, the held frames go
 * to Baileys in order, only as many at a time as the queue has room for, and the TCP socket is read
 * again once few are left. Unpaused, frames still go to Baileys only as fast as the queue, and the
 * worker, have room for them (a burst read at once is metered the same way); a socket that finds the
 * worker full asks to be paused rather than trying again every few milliseconds. The worker's room
 * counts once the socket is logged in: its handshake and login bring nothing to store.
 *
 * Baileys closes a socket from which it received nothing for 35 s (its keep-alive). A socket we do not
 * read is not silent on the server's account, so the reader tells Baileys' keep-alive so (`readingHeld`,
 * our patch): a long pause of a history storm, or a database out of reach, does not end the session.
 */
export class SocketReader {
  private readonly client: Client;
  private readonly emit: Client['emit'];
  private held: unknown[][] = [];
  private paused = false;
  /** Holds taken by hold() and not yet given back by unhold(): the database is out of reach (issue #39). */
  private holds = 0;
  private tcpPaused = false;
  private timer: NodeJS.Timeout | null = null;
  private budget = 0;
  private refilledAt = -Infinity;
  private closed = false;
  private stopped = false;
  /**
   * The stanzas handed to Baileys' handlers and not handled yet, and those handled (our patch). Baileys
   * queues a reconnect's offline stanzas without bound and decrypts them faster than a busy account's
   * writes are stored (ADR 0048): counted against the room, they are not handed over ahead of the queue.
   */
  private readonly stanzas?: () => { inFlight: number; done: number };
  private stanzasDone = 0;
  private stanzasProgressAt = 0;

  constructor(
    private readonly socket: SocketContext['socket'],
    private readonly max: number,
    private readonly depth: () => number,
    private readonly logger: Logger,
    private readonly worker: WorkerRoom = UNBOUNDED,
  ) {
    this.client = socket.ws as unknown as Client;
    this.stanzas = (socket as { stanzas?: () => { inFlight: number; done: number } }).stanzas;
    this.client.readingHeld = () => this.readingHeld();
    this.emit = this.client.emit.bind(this.client);
    this.client.emit = (event, ...args) => {
      if (event === 'CB:success') {
        this.loggedIn = true;
        this.refilledAt = -Infinity; // the budget of this window was counted without the worker's room
      }
      if (event !== 'message' || this.closed || (!this.blocked && this.held.length === 0 && this.allow())) return this.emit(event, ...args);
      this.held.push(args);
      if (this.held.length >= this.max) this.pauseTcp();
      if (!this.blocked) this.later();
      return true;
    };
  }

  /**
   * WhatsApp's `<success>` came (Baileys emits it on the websocket as `CB:success`): the worker's room counts
   * from then on. The noise handshake and the login before it bring nothing to store, and holding them
   * while another instance's history fills the worker would time the handshake out (20 s) and make the
   * socket try again and again; only the socket's own bound applies to them.
   */
  private loggedIn = false;

  /** Since when the socket has been held or paused without a break (read by the keep-alive every 30 s). */
  private holdingSince: number | null = null;

  /** For Baileys' keep-alive: frames held or the socket not read, for less than READING_HELD_MAX_MS so far. */
  private readingHeld(): boolean {
    if (this.closed || (!this.blocked && this.held.length === 0)) {
      this.holdingSince = null;
      return false;
    }
    const now = Date.now();
    this.holdingSince ??= now;
    return now - this.holdingSince < READING_HELD_MAX_MS;
  }

  /** Paused by backpressure, stopped, or held while the database is out of reach. */
  private get blocked(): boolean {
    return this.paused || this.holds > 0;
  }

  /**
   * The database is out of reach (issue #39): nothing more goes to Baileys, which would decrypt,
   * advance Signal sessions and acknowledge to WhatsApp what cannot be stored now, until every hold is
   * given back (unhold). Independent of the backpressure's pause: either keeps the socket unread.
   */
  hold(): void {
    this.holds++;
    if (this.holds > 1) return;
    this.pauseTcp();
    this.logger.warn({ queued: this.depth(), held: this.held.length }, 'database out of reach: socket not read until writes get through');
  }

  unhold(): void {
    if (this.holds === 0) return;
    this.holds--;
    if (this.holds > 0 || this.closed) return;
    this.logger.info({ queued: this.depth(), held: this.held.length }, 'writes get through again: socket read again');
    this.pump();
  }

  /** Frames held, not yet handed to Baileys. */
  get holding(): number {
    return this.held.length;
  }

  /**
   * Whether what WhatsApp sends now may wait behind frames this socket does not hand Baileys: frames
   * held, the socket paused or held, or Baileys' decrypts waiting for the queue's room. A write that
   * waits for WhatsApp's answer then may wait for a frame its own queue holds back (answerWhileRead).
   */
  get stuck(): boolean {
    return this.closed || this.blocked || this.held.length > 0 || heldAcksOf(this.socket)?.waitingForRoom === true;
  }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    // The TCP socket stops at once: what arrives meanwhile is only what the websocket had read already.
    // Waiting for `max` held frames let every socket paused by the worker's bound hold that many, so the
    // worker held up to sockets × INBOUND_QUEUE_MAX frames beyond its INBOUND_WORKER_QUEUE_MAX.
    this.pauseTcp();
    this.logger.warn({ queued: this.depth() }, 'inbound queue full: socket not read until it drains');
  }

  /**
   * The handler stopped for good (its lease is lost): nothing more goes to Baileys, which would
   * acknowledge to WhatsApp what this worker may no longer store; WhatsApp sends it again to the
   * instance's new holder. Never resumed; `close` drops what is held.
   */
  stop(): void {
    this.stopped = true;
    this.paused = true;
    this.pauseTcp();
  }

  resume(): void {
    if (!this.paused || this.stopped || this.closed) return;
    this.paused = false;
    this.logger.info({ queued: this.depth(), held: this.held.length }, 'inbound queue drained: socket read again');
    this.pump();
  }

  /** Hands held frames to Baileys while the queue has room; called when a queued event is done. */
  pump(): void {
    if (this.blocked || this.closed) return;
    while (this.held.length > 0 && this.allow()) this.emit('message', ...(this.held.shift() as unknown[]));
    if (this.held.length < this.max / 4) this.resumeTcp();
    if (this.held.length > 0) this.later();
  }

  /**
   * Whether one more frame may go to Baileys now: as many per PUMP_MS as the queue has room for (a
   * frame's events reach the queue only after Baileys decrypted it, so room is counted per window).
   */
  private allow(): boolean {
    const now = performance.now();
    if (now - this.refilledAt >= PUMP_MS) {
      // Two queues, each within the socket's bound: ours (what Baileys emitted and we have not stored)
      // and Baileys' own (stanzas it holds, not yet handled). Its decrypts wait for room in ours (HeldAcks).
      this.budget = Math.min(this.max - this.depth(), this.max - this.inBaileys(now), this.workerRoom());
      this.refilledAt = now;
    }
    if (this.budget <= 0) return false;
    this.budget--;
    return true;
  }

  /**
   * Stanzas Baileys holds, as long as it is handling them. A handler may wait for a frame still held
   * here (the answer to a query it sent, behind the flood): once Baileys has finished none for
   * STANZAS_STALL_MS they no longer count, and frames go by the queue's room alone until it moves again.
   */
  private inBaileys(now: number): number {
    if (!this.stanzas) return 0;
    const { inFlight, done } = this.stanzas();
    if (done !== this.stanzasDone || inFlight <= 0) {
      this.stanzasDone = done;
      this.stanzasProgressAt = now;
    }
    // Waiting for the queue's room is not waiting for a frame (HeldAcks): that wait ends as writes commit.
    if (heldAcksOf(this.socket)?.waitingForRoom) this.stanzasProgressAt = now;
    return now - this.stanzasProgressAt > STANZAS_STALL_MS ? 0 : Math.max(0, inFlight);
  }

  private workerRoom(): number {
    return this.loggedIn ? this.worker.room() : Infinity;
  }

  private later(): void {
    if (this.timer || this.closed) return;
    // The worker is full: paused (no timer), read again when the backpressure resumes this socket.
    if (this.workerRoom() <= 0) return this.worker.full();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pump();
    }, PUMP_MS);
  }

  /** The socket is gone: nothing is held any more (unacknowledged frames are sent again by WhatsApp). */
  close(): void {
    this.closed = true;
    this.held = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private pauseTcp(): void {
    if (this.tcpPaused) return;
    this.tcpPaused = true;
    this.client.socket?.pause?.();
  }

  private resumeTcp(): void {
    if (!this.tcpPaused) return;
    this.tcpPaused = false;
    this.client.socket?.resume?.();
  }
}
