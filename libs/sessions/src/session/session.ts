import {
  ErrorCode,
  RpcError,
  type ConnectReply,
  type ConnectRequest,
  type JidObject,
  type PresenceRequest,
  type PrivacySettings,
  type StatusPrivacy,
  type StatusReply,
} from '@gw/contracts';
import { jidDecode, type WASocket } from '../baileys';
import { readPrivacySettings, readStatusPrivacy, writePrivacySettings } from './privacy-settings';
import { SessionPairing } from './session-pairing';

// The parts a Session is made of (session-state, -endings, -connection, -pairing) and its types
// (session-types) have files of their own; what this module exported is still exported from here.
export { formatPairingCode } from './session-pairing';
export { SessionEndedError, type SessionOwner, type SessionPhase, type SessionServices } from './session-types';

/**
 * One held instance: its Baileys socket, its credentials and the truth about its connection.
 * Every socket event and command runs on one serial queue; every status change is written with its
 * `connection` event under the lease. Sockets are numbered: events of a replaced socket are ignored.
 */
export class Session extends SessionPairing {
  /**
   * Answers a connect request: an open session replies at once; a paired one reconnects from stored
   * auth and replies after `open` or a short wait; an unpaired one starts a pairing and replies once
   * the QR or pairing code exists. A pairing in progress keeps what was first requested.
   */
  async connect(request: ConnectRequest): Promise<ConnectReply> {
    await this.run(() => this.beginConnect(request)).catch(async (error: unknown) => {
      // A start that broke half way (e.g. the database failed) must not leave a husk holding the lease.
      if (!(error instanceof RpcError) && (this.phase === 'idle' || this.phase === 'pairing')) {
        this.detachSocket();
        await this.end(true).catch(() => undefined);
      }
      throw error;
    });
    const waitMs = this.phase === 'pairing' ? this.services.config.pairingReplyWaitMs : this.services.config.reconnectReplyWaitMs;
    await this.changed.waitFor(() => this.readyToReply(), waitMs);
    if (this.phase === 'ended' && this.pairingRefusal) throw new RpcError(ErrorCode.Refused, this.pairingRefusal);
    const waiting = this.phase !== 'open' && !this.row.qrcode && !this.row.paircode;
    return {
      status: this.row.status,
      loggedIn: this.phase === 'open',
      jid: this.jidObject(),
      qrcode: this.row.qrcode,
      paircode: this.row.paircode,
      requestId: this.row.pairingRequestId || request.requestId,
      ...(waiting && this.connectFailure ? { reason: this.connectFailure } : {}),
    };
  }

  /** Starts an adopted (orphaned, paired) instance from stored auth; ends it if nothing is stored. */
  adopt(): Promise<void> {
    this.arrivingUntil = Date.now() + this.services.config.sendReconnectWaitMs;
    return this.run(async () => {
      if (this.phase !== 'idle') return;
      if (await this.loadStoredAuth()) await this.startReconnect(false);
      else await this.forgetUnpairedDevice();
    }).catch(async (error: unknown) => {
      // Could not even read the credentials: give the lease back, the next reconcile tries again.
      if (this.phase === 'idle') await this.end(true).catch(() => undefined);
      throw error;
    });
  }

  status(): StatusReply {
    this.assertAlive();
    return { status: this.row.status, loggedIn: this.phase === 'open', jid: this.jidObject() };
  }

  /** Unlinks the device (sock.logout when connected), clears credentials, ends the session. */
  logout(): Promise<StatusReply> {
    return this.run(async () => {
      this.assertAlive();
      const socket = this.socket;
      if (socket && this.phase === 'open') {
        this.generation += 1; // the 401 close that follows is ours, not news
        try {
          await socket.logout('logout requested');
        } catch (error) {
          this.logger.warn({ err: error }, 'logout could not reach WhatsApp; clearing credentials anyway');
        }
      }
      await this.loggedOut('401: logged out by request');
      return { status: this.row.status, loggedIn: false, jid: null };
    });
  }

  /** Closes without logout, marks the instance disconnected on purpose and gives the lease back. */
  release(): Promise<void> {
    return this.run(async () => {
      if (this.phase === 'ended') return;
      await this.stopDisconnected('disconnected by request');
    });
  }

  /**
   * Hibernation (uazapi 2.1.1): closes without logout, marks the instance `hibernated` (desired
   * disconnected: no worker adopts it) and gives the lease back; the credentials stay, so a connect
   * wakes it without a QR. Refused while pairing: there is nothing to keep yet.
   */
  hibernate(): Promise<void> {
    return this.run(async () => {
      if (this.phase === 'ended') return;
      if (this.phase === 'pairing' || this.phase === 'linking' || this.phase === 'idle')
        throw new RpcError(ErrorCode.Conflict, 'Instance cannot hibernate while it is pairing: it has no linked device yet');
      await this.stopDisconnected('hibernated by request', 'hibernated');
    });
  }

  /** Graceful reconnect (restartAll, /instance/reset): close without logout, reconnect from stored auth now. */
  restart(reason = 'restart requested'): Promise<void> {
    return this.run(async () => {
      if (this.phase !== 'open' && this.phase !== 'connecting') return;
      this.detachSocket();
      this.reconnectTimer?.cancel();
      this.reconnectTimer = undefined;
      this.attempt = 0;
      await this.startReconnect(true, reason);
    });
  }

  async setPresence(request: PresenceRequest): Promise<void> {
    const socket = this.openSocket();
    await socket.sendPresenceUpdate(request.presence);
    await this.run(() => this.write({ patch: { currentPresence: request.presence } }));
  }

  getPrivacy(): Promise<PrivacySettings> {
    return readPrivacySettings(this.openSocket());
  }

  getStatusPrivacy(): Promise<StatusPrivacy> {
    return readStatusPrivacy(this.openSocket());
  }

  setPrivacy(settings: PrivacySettings): Promise<PrivacySettings> {
    return writePrivacySettings(this.openSocket(), settings);
  }

  /** The socket of an open session, for commands that talk to WhatsApp. */
  openSocket(): WASocket {
    this.assertAlive();
    if (this.phase !== 'open' || !this.socket) throw new RpcError(ErrorCode.NotConnected, 'instance is not connected');
    return this.socket;
  }

  /**
   * The open socket for a send. While the session is arriving from another worker (adopted, its first
   * socket not open yet: a drain's hand-over, a takeover), the send waits for that open, as long as a
   * send waits for a reconnect, instead of being refused NotConnected (issue #39).
   */
  async openSocketOnArrival(): Promise<WASocket> {
    const waitMs = this.arrivingUntil - Date.now();
    if (this.phase !== 'open' && waitMs > 0) await this.whenOpen(waitMs);
    return this.openSocket();
  }

  /**
   * The socket once the session is open again (a send whose connection closed under it waits for
   * the reconnect): another socket than `closed`, which the session may not have seen close yet.
   * Null when none was open within `timeoutMs`, or the session ended.
   */
  async whenOpen(timeoutMs: number, closed?: WASocket): Promise<WASocket | null> {
    const ready = () => this.phase === 'open' && this.socket !== null && this.socket !== closed;
    await this.changed.waitFor(() => ready() || this.phase === 'ended', timeoutMs);
    return ready() ? this.socket : null;
  }

  /**
   * Worker shutdown: close without logout and give the lease back. A paired instance is marked
   * `connecting` (another worker adopts it); a pairing in progress cannot move and ends.
   */
  shutdown(): Promise<void> {
    return this.run(async () => {
      if (this.phase === 'ended') return;
      if (this.phase === 'idle') return this.end(true); // nothing started, nothing to say
      if (this.phase === 'pairing') return this.stopDisconnected('worker shutdown');
      this.detachSocket();
      await this.write({ patch: { status: 'connecting', lastDisconnect: new Date(), lastDisconnectReason: 'worker shutdown' }, event: {} });
      await this.end(true);
    });
  }

  private async beginConnect(request: ConnectRequest): Promise<void> {
    this.assertAlive();
    switch (this.phase) {
      case 'open':
      case 'pairing':
      case 'linking':
        return;
      case 'connecting':
        // A pending backoff is cut short: somebody is waiting for this instance now.
        if (this.reconnectTimer) {
          this.attempt = 0;
          this.connectFailure = undefined; // this try's own outcome answers
          this.reconnectThroughGate(0);
        }
        return;
      case 'idle':
        if (await this.loadStoredAuth()) return this.startReconnect(false);
        return this.startPairing(request);
    }
  }

  private readyToReply(): boolean {
    switch (this.phase) {
      case 'pairing':
        return Boolean(this.row.qrcode || this.row.paircode || this.connectFailure);
      case 'connecting':
        return Boolean(this.connectFailure);
      case 'linking':
        return false;
      default:
        return true;
    }
  }

  private jidObject(): JidObject | null {
    const id = this.phase === 'open' ? this.auth?.creds.me?.id : undefined;
    const decoded = id ? jidDecode(id) : undefined;
    return decoded ? { user: decoded.user, agent: 0, device: decoded.device ?? 0, server: decoded.server } : null;
  }
}
