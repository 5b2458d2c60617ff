import { FencedOutError } from '@gw/persistence';
import type { WASocket } from '../baileys';
import { forgetHistoryFor } from '../socket/history-sync-limit';
import type { Session } from './session';
import { SessionState } from './session-state';

/**
 * How a session's socket and the session itself stop: the socket dropped (its events ignored from
 * then on), the session ended on purpose (logged out, stopped disconnected or hibernated, or adopted
 * with nothing stored) with its row saying why, or aborted without a write when the lease is gone.
 */
export abstract class SessionEndings extends SessionState {
  /**
   * The lease is gone (lost, fenced out, or the worker dies): stop everything at once and write
   * nothing, not even through tasks still queued. Synchronous on purpose.
   */
  override abort(reason: string, options: { hard?: boolean } = {}): void {
    if (this.phase === 'ended') return;
    this.logger.warn({ reason }, 'session aborted without writing');
    this.phase = 'ended';
    this.clearTimers();
    this.auth?.close();
    this.detachSocket(options.hard);
    this.changed.notify();
    void this.owner
      .sessionEnded(this.session, { release: false })
      .catch((error: unknown) => this.logger.error({ err: error }, 'ending aborted session failed'));
  }

  /** Forgets the current socket (its events are ignored from now on) and closes it. */
  protected detachSocket(hard = false): void {
    this.releaseHandshake();
    this.generation += 1;
    for (const detach of this.detachObservers.splice(0)) {
      try {
        detach();
      } catch (error) {
        this.logger.warn({ err: error }, 'socket observer failed to detach');
      }
    }
    const socket = this.socket;
    this.socket = null;
    if (!socket) return;
    // Still open or logging in: its login may reach WhatsApp after the next socket's and replace it (440).
    if (!socket.ws.isClosed && !socket.ws.isClosing) this.replacedOwnSocketAt = Date.now();
    closeQuietly(socket, hard);
  }

  protected releaseHandshake(): void {
    const release = this.handshakeRelease;
    this.handshakeRelease = undefined;
    release?.();
  }

  /** 401: the device is unlinked. Credentials go first (fenced), then the row says why. */
  protected async loggedOut(reason: string): Promise<void> {
    this.detachSocket();
    // No key write of the dead socket may land after the wipe.
    await this.auth?.closeAndDrain();
    try {
      await this.guardFencing(() => this.services.authStates.clearFenced(this.lease));
    } catch (error) {
      if (error instanceof FencedOutError) throw error;
      // Left behind, they are harmless: `paired` goes false, and the next pairing replaces them.
      this.logger.error({ err: error }, 'clearing credentials after logout failed');
    }
    await this.write({
      patch: {
        status: 'disconnected',
        paired: false,
        desiredState: 'disconnected',
        qrcode: '',
        paircode: '',
        pairingExpiresAt: null,
        lastDisconnect: new Date(),
        lastDisconnectReason: reason,
      },
      event: { type: 'LoggedOut' },
    });
    await this.end(true);
  }

  /** Ends on purpose and stays disconnected (or hibernated; nobody adopts it): credentials are kept. */
  protected async stopDisconnected(reason: string, status: 'disconnected' | 'hibernated' = 'disconnected'): Promise<void> {
    this.detachSocket();
    await this.write({
      patch: {
        status,
        desiredState: 'disconnected',
        qrcode: '',
        paircode: '',
        pairingExpiresAt: null,
        lastDisconnect: new Date(),
        lastDisconnectReason: reason,
      },
      event: {},
    });
    await this.end(true);
  }

  /** Adopted but nothing stored: the `paired` flag was stale. Correct it and let go. */
  protected async forgetUnpairedDevice(): Promise<void> {
    await this.write({ patch: { status: 'disconnected', paired: false, desiredState: 'disconnected', qrcode: '', paircode: '' }, event: {} });
    await this.end(true);
  }

  protected async end(release: boolean): Promise<void> {
    if (this.phase === 'ended') return;
    this.phase = 'ended';
    this.clearTimers();
    this.detachSocket();
    this.auth?.close();
    this.changed.notify();
    await this.owner.sessionEnded(this.session, { release });
  }

  private clearTimers(): void {
    clearTimeout(this.expiryTimer);
    this.reconnectTimer?.cancel();
    this.reconnectTimer = undefined;
    if (this.pairing) forgetHistoryFor(this.pairing.identityKey);
  }

  /** What the owner is told about: every SessionEndings is a Session (its only concrete class). */
  private get session(): Session {
    return this as unknown as Session;
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
