import { reconnectDelay } from './disconnect-reason';
import type { PacedWait } from './reconnect-pacer';
import type { SessionState } from './session-state';
import type { SocketSlot } from './socket-slot';

/** Opens the reconnect's socket: `handshake` is its gate ticket, `rowRead` says the row was read for this very request. */
export type ReconnectNow = (handshake: () => void, rowRead: boolean) => Promise<void>;

/**
 * When a session's next socket opens: after its backoff (paced by the worker's ReconnectPacer), then
 * once the worker's HandshakeGate lets it. Reconnects are numbered (tickets): a newer request replaces
 * one still waiting, and an older one that gets its turn steps aside.
 */
export class ReconnectScheduler {
  private timer: PacedWait | undefined;
  /** The reconnect waiting for its delay or for the gate; an older one that gets its turn steps aside. */
  private ticket = 0;
  /**
   * The reconnect ticket whose request read or wrote the row (the adoption's read, startReconnect's
   * write answering the row as stored): its socket opens with that row, not read once more (issue #38).
   */
  private rowReadForTicket = -1;
  private attempt = 0;

  constructor(
    private readonly state: SessionState,
    private readonly slot: SocketSlot,
    private readonly reconnectNow: ReconnectNow,
  ) {}

  /** Whether a reconnect waits for its delay (not yet for the gate). */
  get backingOff(): boolean {
    return this.timer !== undefined;
  }

  /** Tries that failed in a row since the last open (the backoff grows with them). */
  get failedAttempts(): number {
    return this.attempt;
  }

  resetAttempts(): void {
    this.attempt = 0;
  }

  /** A socket opens now: a reconnect still waiting is not needed any more. */
  supersede(): void {
    this.ticket += 1;
  }

  /** The row was read (or written and answered) for the reconnect just requested: its socket need not read it again. */
  markRowRead(): void {
    this.rowReadForTicket = this.ticket;
  }

  cancel(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** The next try after a failed one, with the jittered backoff of its attempt. */
  schedule(): void {
    const { reconnectBaseMs, reconnectMaxMs } = this.state.services.config;
    this.throughGate(reconnectDelay(this.attempt++, reconnectBaseMs, reconnectMaxMs));
  }

  /**
   * Every socket of a session after its first pairing socket opens here: after `delayMs` (the
   * jittered backoff, cut short by the worker's ReconnectPacer once the server is reachable again),
   * then once the worker's HandshakeGate lets it. After a server restart every
   * socket closes at once, after a takeover or a late lease renewal hundreds of sessions start at once:
   * a handshake costs CPU (noise, Signal), and unbounded they time each other out (issue #34). A newer
   * request replaces one still waiting (the older one gives its slot back when it gets it).
   */
  throughGate(delayMs: number): void {
    const { state } = this;
    this.timer?.cancel();
    const ticket = ++this.ticket;
    this.timer = state.services.pacer.wait(this, delayMs, () => {
      this.timer = undefined;
      void state.services.handshakes
        .acquire((release) => this.onHandshakeHoldEnd(release))
        .then((release) =>
          state
            .run(() => {
              if (state.phase === 'ended' || ticket !== this.ticket) return release();
              return this.reconnectNow(release, ticket === this.rowReadForTicket);
            })
            .catch((error: unknown) => {
              release();
              throw error;
            }),
        );
    });
  }

  /**
   * The gate's hold ended and this ticket's socket has neither logged in, shown a QR nor closed: on a
   * saturated CPU such a handshake can go on for minutes while the gate lets others in behind it. The
   * socket is closed (the ticket goes back with it, so the bound stays true) and the session queues
   * again. A ticket whose socket is not open yet, or that is no longer this session's, just goes back.
   */
  private onHandshakeHoldEnd(release: () => void): void {
    const { state, slot } = this;
    if (!slot.holdsHandshake(release) || !slot.socket || state.phase === 'ended') return release();
    state.logger.warn(
      { holdMs: state.services.handshakes.holdMs },
      'handshake not finished within the gate hold; closing the socket and queueing the reconnect again',
    );
    slot.detach(true);
    release();
    void state.run(() => {
      if (slot.socket === null && (state.phase === 'connecting' || state.phase === 'pairing' || state.phase === 'linking')) this.schedule();
    });
  }
}
