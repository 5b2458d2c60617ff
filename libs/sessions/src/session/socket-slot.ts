import type { Logger } from '@gw/platform';
import type { WASocket } from '../baileys';

/**
 * The socket a session holds now, and what goes with it: its number (`generation`: events of a
 * replaced socket carry an older one and are ignored), its observers, and the HandshakeGate ticket
 * it holds until it logs in, shows a QR or closes.
 */
export class SocketSlot {
  private current: WASocket | null = null;
  private generation = 0;
  private detachObservers: Array<() => void> = [];
  /** Frees this session's slot in the worker's HandshakeGate (held from a reconnect's socket until it logs in or closes). */
  private handshakeRelease: (() => void) | undefined;
  /** When this session last dropped a socket of its own that was still open or logging in (see onClose's 440). */
  private replacedOwnSocketAt = 0;

  constructor(private readonly logger: Logger) {}

  get socket(): WASocket | null {
    return this.current;
  }

  /** The socket about to be opened is the current one from now on: its number, for its events. */
  numberNext(): number {
    return ++this.generation;
  }

  isCurrent(generation: number): boolean {
    return generation === this.generation;
  }

  /** The current socket's events are ignored from now on (e.g. the 401 close a logout causes). */
  ignoreCurrentEvents(): void {
    this.generation += 1;
  }

  hold(socket: WASocket): void {
    this.current = socket;
  }

  /** Run when the socket is dropped. */
  onDetach(detach: () => void): void {
    this.detachObservers.push(detach);
  }

  /** The HandshakeGate ticket of the socket about to be opened (taken after the old socket's detach). */
  holdHandshake(release: (() => void) | undefined): void {
    this.handshakeRelease = release;
  }

  holdsHandshake(release: () => void): boolean {
    return this.handshakeRelease === release;
  }

  releaseHandshake(): void {
    const release = this.handshakeRelease;
    this.handshakeRelease = undefined;
    release?.();
  }

  /**
   * Whether this session dropped a socket of its own that was still open or logging in less than
   * `withinMs` ago (a 440 then is that socket's late login); answers true once per such drop.
   */
  replacedOwnSocketWithin(withinMs: number): boolean {
    if (Date.now() - this.replacedOwnSocketAt >= withinMs) return false;
    this.replacedOwnSocketAt = 0;
    return true;
  }

  /** Forgets the current socket (its events are ignored from now on) and closes it. */
  detach(hard = false): void {
    this.releaseHandshake();
    this.generation += 1;
    for (const detach of this.detachObservers.splice(0)) {
      try {
        detach();
      } catch (error) {
        this.logger.warn({ err: error }, 'socket observer failed to detach');
      }
    }
    const socket = this.current;
    this.current = null;
    if (!socket) return;
    // Still open or logging in: its login may reach WhatsApp after the next socket's and replace it (440).
    if (!socket.ws.isClosed && !socket.ws.isClosing) this.replacedOwnSocketAt = Date.now();
    closeQuietly(socket, hard);
  }
}

/** Ends a socket without logout; a hard close drops the TCP connection like a crashed process would. */
function closeQuietly(socket: WASocket, hard = false): void {
  if (hard) {
    const raw = (socket.ws as unknown as { socket?: { terminate?: () => void } | null }).socket;
    try {
      raw?.terminate?.();
    } catch {
      // already gone
    }
  }
  socket.end(undefined).catch(() => undefined);
}
