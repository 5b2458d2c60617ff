/** Bounds on what a worker holds received and not yet stored (ADR 0013). */
export interface InboundBounds {
  /** A socket stops being read when this many of its items wait or are being written (INBOUND_QUEUE_MAX). */
  socketMax: number;
  /** …or when the worker's sockets together hold this many (INBOUND_WORKER_QUEUE_MAX). */
  workerMax: number;
}

export const INBOUND_BOUNDS_DEFAULTS: InboundBounds = { socketMax: 1_000, workerMax: 20_000 };

/**
 * How far apart two batches of paused sockets are read again. A socket read again may bring a whole
 * history chunk (a thousand messages) before its weight is known, so the worker reads its paused sockets
 * again a few at a time, and only while it is below its low-water mark.
 */
export const RESUME_SPACING_MS = 20;

/** What a paused socket does: stop reading its websocket, and read it again. */
export interface Readable {
  pause(): void;
  resume(): void;
}

/** One socket's share: what it holds, and whether it is paused. */
export class SocketBacklog {
  /** Items queued or being written (an event's weight: a history chunk counts its messages, chats and contacts). */
  depth = 0;
  paused = false;
  /** The socket is gone: never paused or counted among the paused again. */
  closed = false;

  constructor(
    private readonly owner: InboundBackpressure,
    readonly socket: Readable,
    /** The device's first sync is not over (its history may be on its way): the worker's bound holds it whatever it holds yet. */
    readonly syncing: () => boolean = () => false,
  ) {}

  /** The worker's room for this socket: unbounded for a light socket past its first sync (InboundBackpressure.bounded). */
  room(): number {
    return this.owner.roomFor(this);
  }

  /** An event of `weight` items was queued. */
  added(weight = 1): void {
    this.depth += weight;
    this.owner.added(this, weight);
  }

  /** A queued event was handled (stored, or failed). */
  removed(weight = 1): void {
    this.depth -= weight;
    this.owner.removed(this, weight);
    if (this.roomWaiters.length > 0 && this.depth < this.gateAt) this.wake();
  }

  /**
   * Undefined while the socket's queue has room; else resolves once it has (or the socket is gone).
   * Baileys' message handler waits on it after each decrypt (HeldAcks, ADR 0048): its decrypts no
   * longer wait for their key writes, and would otherwise run ahead of a busy account's writes.
   */
  whenRoom(): Promise<void> | undefined {
    if (this.closed || this.depth < this.gateAt) return undefined;
    if (this.roomWaiters.length === 0) this.owner.decryptsWaiting++;
    return new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  private readonly roomWaiters: Array<() => void> = [];

  /**
   * Where the decrypts wait: half the socket's bound. At the bound itself the socket pauses, and reads
   * again only once its queue is down to a quarter: decrypts that filled it to the bound would stop
   * the reading at every turn, and Baileys' queue would run dry while ours drained.
   */
  private get gateAt(): number {
    return Math.max(1, Math.floor(this.owner.bounds.socketMax / 2));
  }

  private wake(): void {
    if (this.roomWaiters.length > 0) this.owner.decryptsWaiting--;
    for (const resolve of this.roomWaiters.splice(0)) resolve();
  }

  /** The worker has no room: the socket stops being read before it hands Baileys another frame. */
  waitForRoom(): void {
    this.owner.pauseFor(this);
  }

  /** The socket is gone: it is no longer paused nor resumed (its queued items still count until handled). */
  close(): void {
    this.closed = true;
    this.owner.close(this);
    this.wake();
  }
}

/**
 * Backpressure for the inbound queues of one worker, counted in items (a received message is one; a
 * history chunk of a thousand messages, chats and contacts weighs what it holds). A socket whose queue
 * reaches `socketMax`, or a socket the worker's bound holds (`bounded`: a quarter of its own bound or
 * more, or its first sync not over) that receives, or is about to hand Baileys a frame, while the
 * worker's total is at `workerMax`, stops reading its websocket (WhatsApp's server keeps what it has
 * not sent; TCP's window holds the rest). A light instance keeps going while another's history fills
 * the worker (bench/history: the other instances' sends). Once the worker is at a quarter of its bound, its paused
 * sockets whose own queues are at a quarter of theirs read again, oldest pause first, a few at a time
 * (`RESUME_SPACING_MS` apart, each batch sized to a quarter of the worker's bound): a thousand sockets
 * read again at once would each bring a history chunk and hold the worker's memory many times over.
 * Frames already read when a socket pauses are still handled, so a bound is exceeded by at most what
 * one read brought.
 */
export class InboundBackpressure {
  private total = 0;
  /** Paused sockets, oldest pause first (a Set keeps insertion order). */
  private readonly paused = new Set<SocketBacklog>();
  private lastResumeAt = -Infinity;
  private resumeTimer: NodeJS.Timeout | null = null;
  /** Pauses so far (a counter), for metrics. */
  pauses = 0;
  /** Sockets whose decrypts wait for room in their queue now (SocketBacklog.whenRoom), for metrics. */
  decryptsWaiting = 0;

  constructor(
    readonly bounds: InboundBounds = INBOUND_BOUNDS_DEFAULTS,
    private readonly onPause: () => void = () => undefined,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Items the worker's sockets hold (queued or being written). */
  get depth(): number {
    return this.total;
  }

  /** Items the worker may still take before its sockets stop being read. */
  get room(): number {
    return this.bounds.workerMax - this.total;
  }

  get pausedSockets(): number {
    return this.paused.size;
  }

  register(socket: Readable, syncing?: () => boolean): SocketBacklog {
    return new SocketBacklog(this, socket, syncing);
  }

  /**
   * Whether the worker's bound stops this socket: one that holds a quarter of its own bound or more, or
   * one still in its first sync (a fresh device whose next frame may be a history). A light socket past its
   * first sync (an instance that sends and gets its acks and receipts) keeps being read while another
   * instance's history fills the worker: it holds less than a quarter of its bound, so what the worker
   * holds beyond its bound is at most that for each such socket.
   */
  bounded(backlog: SocketBacklog): boolean {
    return backlog.depth >= this.bounds.socketMax / 4 || backlog.syncing();
  }

  roomFor(backlog: SocketBacklog): number {
    return this.bounded(backlog) ? this.room : Infinity;
  }

  added(backlog: SocketBacklog, weight = 1): void {
    this.total += weight;
    if (backlog.paused || backlog.closed) return;
    if (backlog.depth >= this.bounds.socketMax || (this.total >= this.bounds.workerMax && this.bounded(backlog))) this.pause(backlog);
  }

  removed(backlog: SocketBacklog, weight = 1): void {
    this.total -= weight;
    if (this.paused.size > 0) this.resumeSome();
  }

  /** A socket about to hand Baileys a frame while the worker is full (SocketReader): paused like one that received. */
  pauseFor(backlog: SocketBacklog): void {
    if (!backlog.paused && !backlog.closed) this.pause(backlog);
  }

  close(backlog: SocketBacklog): void {
    if (this.paused.has(backlog)) this.resume(backlog);
  }

  private pause(backlog: SocketBacklog): void {
    backlog.paused = true;
    this.paused.add(backlog);
    this.pauses++;
    this.onPause();
    backlog.socket.pause();
  }

  /**
   * Below the worker's low-water mark, the oldest paused sockets that are below their own read again:
   * as many as a quarter of the worker's bound has room for at a socket's bound each (at least one),
   * then the next batch RESUME_SPACING_MS later if the worker is still low. A timer brings the next
   * batch: the sockets read again may bring nothing (an idle socket paused holding a pong), and then no
   * item is stored to call this again. Above the mark, the items being stored call it as they go.
   */
  private resumeSome(): void {
    if (this.total > this.bounds.workerMax / 4) return;
    const wait = this.lastResumeAt + RESUME_SPACING_MS - this.now();
    if (wait > 0) return this.resumeLater(wait);
    const batch = Math.max(1, Math.floor(this.bounds.workerMax / 4 / this.bounds.socketMax));
    let resumed = 0;
    for (const paused of [...this.paused]) {
      if (resumed === batch) break;
      if (paused.depth > this.bounds.socketMax / 4) continue;
      this.resume(paused);
      resumed++;
    }
    if (resumed === 0) return;
    this.lastResumeAt = this.now();
    if (this.paused.size > 0) this.resumeLater(RESUME_SPACING_MS);
  }

  private resumeLater(wait: number): void {
    if (this.resumeTimer) return;
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = null;
      if (this.paused.size > 0) this.resumeSome();
    }, Math.ceil(wait));
    this.resumeTimer.unref?.();
  }

  private resume(backlog: SocketBacklog): void {
    this.paused.delete(backlog);
    backlog.paused = false;
    backlog.socket.resume();
  }
}
