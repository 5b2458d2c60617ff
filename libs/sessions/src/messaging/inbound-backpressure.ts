/** Bounds on what a worker holds received and not yet stored (ADR 0013). */
export interface InboundBounds {
  /** A socket stops being read when this many of its events wait or are being written (INBOUND_QUEUE_MAX). */
  socketMax: number;
  /** …or when the worker's sockets together hold this many (INBOUND_WORKER_QUEUE_MAX). */
  workerMax: number;
}

export const INBOUND_BOUNDS_DEFAULTS: InboundBounds = { socketMax: 1_000, workerMax: 20_000 };

/** What a paused socket does: stop reading its websocket, and read it again. */
export interface Readable {
  pause(): void;
  resume(): void;
}

/** One socket's share: what it holds, and whether it is paused. */
export class SocketBacklog {
  depth = 0;
  paused = false;

  constructor(
    private readonly owner: InboundBackpressure,
    readonly socket: Readable,
  ) {}

  /** An event was queued. */
  added(): void {
    this.depth++;
    this.owner.added(this);
  }

  /** A queued event was handled (stored, or failed). */
  removed(): void {
    this.depth--;
    this.owner.removed(this);
  }

  /** The socket is gone: it is no longer resumed (its queued events still count until handled). */
  close(): void {
    this.owner.close(this);
  }
}

/**
 * Backpressure for the inbound queues of one worker: a socket whose queue reaches `socketMax`, or any
 * socket that receives while the worker's total reaches `workerMax`, stops reading its websocket
 * (WhatsApp's server keeps what it has not sent; TCP's window holds the rest), and reads again once
 * its queue is at a quarter of its bound and the worker's at a quarter of its own. Frames already
 * read when it pauses are still handled, so a bound is exceeded by at most what one read brought.
 */
export class InboundBackpressure {
  private total = 0;
  private readonly paused = new Set<SocketBacklog>();
  /** Pauses so far (a counter), for metrics. */
  pauses = 0;

  constructor(
    readonly bounds: InboundBounds = INBOUND_BOUNDS_DEFAULTS,
    private readonly onPause: () => void = () => undefined,
  ) {}

  /** Events the worker's sockets hold (queued or being written). */
  get depth(): number {
    return this.total;
  }

  get pausedSockets(): number {
    return this.paused.size;
  }

  register(socket: Readable): SocketBacklog {
    return new SocketBacklog(this, socket);
  }

  added(backlog: SocketBacklog): void {
    this.total++;
    if (backlog.paused) return;
    if (backlog.depth >= this.bounds.socketMax || this.total >= this.bounds.workerMax) {
      backlog.paused = true;
      this.paused.add(backlog);
      this.pauses++;
      this.onPause();
      backlog.socket.pause();
    }
  }

  removed(backlog: SocketBacklog): void {
    this.total--;
    if (!backlog.paused && this.paused.size === 0) return;
    if (this.total > this.bounds.workerMax / 4) return;
    // The worker is below its low-water mark: every paused socket below its own reads again.
    for (const paused of [...this.paused]) if (paused.depth <= this.bounds.socketMax / 4) this.resume(paused);
  }

  close(backlog: SocketBacklog): void {
    if (this.paused.has(backlog)) this.resume(backlog);
  }

  private resume(backlog: SocketBacklog): void {
    this.paused.delete(backlog);
    backlog.paused = false;
    backlog.socket.resume();
  }
}
