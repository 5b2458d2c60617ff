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
import type { InstanceEntity, Lease } from '@gw/persistence';
import { jidDecode, type WASocket } from '../baileys';
import { readPrivacySettings, readStatusPrivacy, writePrivacySettings } from './privacy-settings';
import { SessionConnection } from './session-connection';
import { SessionEndings } from './session-endings';
import { SessionPairing } from './session-pairing';
import { SessionState } from './session-state';
import type { SessionOwner, SessionPhase, SessionServices } from './session-types';
import { SocketSlot } from './socket-slot';

// The Session's parts (session-state, socket-slot, -connection, -pairing, -endings) and its types have
// files of their own; what this module exported before is still exported from here.
export { formatPairingCode } from './session-pairing';
export { SessionEndedError, type SessionOwner, type SessionPhase, type SessionServices } from './session-types';

/** Without a drain's own bound: how long a shutdown waits for the Signal state to be stored. */
const SIGNAL_STATE_SETTLE_MS = 5_000;

/** Whether `work` resolved within `ms` (a rejection is thrown; past `ms` it is left to settle on its own). */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms))));
  work.catch(() => undefined);
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One held instance: its Baileys socket, its credentials and the truth about its connection.
 * Every socket event and command runs on one serial queue; every status change is written with its
 * `connection` event under the lease. Sockets are numbered: events of a replaced socket are ignored.
 *
 * The Session answers commands; its parts do the work, each given what it uses:
 * - SessionState: phase, credentials, pairing and row; the serial queue and the fenced write
 * - SocketSlot: the socket held now, its number, observers and handshake ticket
 * - SessionConnection: sockets from stored credentials, their events, reconnects (ReconnectScheduler)
 * - SessionPairing: a new pairing by QR or code, until the phone confirms or it expires
 * - SessionEndings: logout, stopping disconnected, ending, and the abort that writes nothing
 */
export class Session {
  private readonly state: SessionState;
  private readonly slot: SocketSlot;
  private readonly endings: SessionEndings;
  private readonly connection: SessionConnection;
  private readonly pairing: SessionPairing;

  constructor(
    row: InstanceEntity,
    readonly lease: Lease,
    services: SessionServices,
    owner: SessionOwner,
    /** The credentials' text read with `row` after the lease was claimed (an adoption), if it was. */
    storedCreds?: string | null,
  ) {
    this.state = new SessionState(row, lease, services, (reason) => this.abort(reason), storedCreds);
    this.slot = new SocketSlot(this.state.logger);
    this.endings = new SessionEndings(this.state, this.slot, {
      stopTimers: () => {
        this.pairing.stop();
        this.connection.cancelReconnect();
      },
      ended: (outcome) => owner.sessionEnded(this, outcome),
    });
    this.connection = new SessionConnection(this.state, this.slot, this.endings, {
      onQr: (qr) => this.pairing.onQr(qr),
      onPairSuccess: () => this.pairing.onPairSuccess(),
      onRegRefresh: () => this.pairing.onRegRefresh(),
    });
    this.pairing = new SessionPairing(this.state, this.slot, this.endings, this.connection);
  }

  get instanceId(): string {
    return this.lease.instanceId;
  }

  get currentPhase(): SessionPhase {
    return this.state.phase;
  }

  /**
   * Its socket is on its way to `open` and no try has failed yet: a session adopted or restarted moments ago. One
   * that failed and waits for its next try (WhatsApp unreachable, say) is not opening (ADR 0057).
   */
  get opening(): boolean {
    return this.connection.opening;
  }

  get instance(): InstanceEntity {
    return this.state.row;
  }

  /**
   * The lease is gone (lost, fenced out, or the worker dies): stop everything at once and write
   * nothing, not even through tasks still queued. Synchronous on purpose.
   */
  abort(reason: string, options: { hard?: boolean } = {}): void {
    this.endings.abort(reason, options);
  }

  /**
   * Answers a connect request: an open session replies at once; a paired one reconnects from stored
   * auth and replies after `open` or a short wait; an unpaired one starts a pairing and replies once
   * the QR or pairing code exists. A pairing in progress keeps what was first requested.
   */
  async connect(request: ConnectRequest): Promise<ConnectReply> {
    const { state } = this;
    await state
      .run(() => this.beginConnect(request))
      .catch(async (error: unknown) => {
        // A start that broke half way (e.g. the database failed) must not leave a husk holding the lease.
        if (!(error instanceof RpcError) && (state.phase === 'idle' || state.phase === 'pairing')) {
          this.slot.detach();
          await this.endings.end(true).catch(() => undefined);
        }
        throw error;
      });
    const waitMs = state.phase === 'pairing' ? state.services.config.pairingReplyWaitMs : state.services.config.reconnectReplyWaitMs;
    await state.changed.waitFor(() => this.readyToReply(), waitMs);
    if (state.phase === 'ended' && this.pairing.refusal) throw new RpcError(ErrorCode.Refused, this.pairing.refusal);
    const waiting = state.phase !== 'open' && !state.row.qrcode && !state.row.paircode;
    const failure = this.connection.failure;
    return {
      status: state.row.status,
      loggedIn: state.phase === 'open',
      jid: this.jidObject(),
      qrcode: state.row.qrcode,
      paircode: state.row.paircode,
      requestId: state.row.pairingRequestId || request.requestId,
      ...(waiting && failure ? { reason: failure } : {}),
    };
  }

  /** Starts an adopted (orphaned, paired) instance from stored auth; ends it if nothing is stored. */
  adopt(): Promise<void> {
    const { state } = this;
    this.connection.expectArrival(Date.now() + state.services.config.sendReconnectWaitMs);
    return state
      .run(async () => {
        if (state.phase !== 'idle') return;
        if (await this.connection.loadStoredAuth()) await this.connection.startReconnect(false);
        else await this.endings.forgetUnpairedDevice();
      })
      .catch(async (error: unknown) => {
        // Could not even read the credentials: give the lease back, the next reconcile tries again.
        if (state.phase === 'idle') await this.endings.end(true).catch(() => undefined);
        throw error;
      });
  }

  status(): StatusReply {
    this.state.assertAlive();
    return { status: this.state.row.status, loggedIn: this.state.phase === 'open', jid: this.jidObject() };
  }

  /** Unlinks the device (sock.logout when connected), clears credentials, ends the session. */
  logout(): Promise<StatusReply> {
    const { state } = this;
    return state.run(async () => {
      state.assertAlive();
      const socket = this.slot.socket;
      if (socket && state.phase === 'open') {
        this.slot.ignoreCurrentEvents(); // the 401 close that follows is ours, not news
        try {
          await socket.logout('logout requested');
        } catch (error) {
          state.logger.warn({ err: error }, 'logout could not reach WhatsApp; clearing credentials anyway');
        }
      }
      await this.endings.loggedOut('401: logged out by request');
      return { status: state.row.status, loggedIn: false, jid: null };
    });
  }

  /** Closes without logout, marks the instance disconnected on purpose and gives the lease back. */
  release(): Promise<void> {
    return this.state.run(async () => {
      if (this.state.phase === 'ended') return;
      await this.endings.stopDisconnected('disconnected by request');
    });
  }

  /**
   * Hibernation (uazapi 2.1.1): closes without logout, marks the instance `hibernated` (desired
   * disconnected: no worker adopts it) and gives the lease back; the credentials stay, so a connect
   * wakes it without a QR. Refused while pairing: there is nothing to keep yet.
   */
  hibernate(): Promise<void> {
    const { state } = this;
    return state.run(async () => {
      if (state.phase === 'ended') return;
      if (state.phase === 'pairing' || state.phase === 'linking' || state.phase === 'idle')
        throw new RpcError(ErrorCode.Conflict, 'Instance cannot hibernate while it is pairing: it has no linked device yet');
      await this.endings.stopDisconnected('hibernated by request', 'hibernated');
    });
  }

  /** Graceful reconnect (restartAll, /instance/reset): close without logout, reconnect from stored auth now. */
  restart(reason = 'restart requested'): Promise<void> {
    return this.state.run(async () => {
      if (this.state.phase !== 'open' && this.state.phase !== 'connecting') return;
      await this.connection.restart(reason);
    });
  }

  async setPresence(request: PresenceRequest): Promise<void> {
    const socket = this.openSocket();
    await socket.sendPresenceUpdate(request.presence);
    await this.state.run(() => this.state.write({ patch: { currentPresence: request.presence } }));
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
    this.state.assertAlive();
    const socket = this.slot.socket;
    if (this.state.phase !== 'open' || !socket) throw new RpcError(ErrorCode.NotConnected, 'instance is not connected');
    return socket;
  }

  /**
   * The open socket for a send. While the session is arriving from another worker (adopted, its first
   * socket not open yet: a drain's hand-over, a takeover), the send waits for that open, as long as a
   * send waits for a reconnect, instead of being refused NotConnected (issue #39).
   */
  async openSocketOnArrival(): Promise<WASocket> {
    const waitMs = this.connection.arrivalWaitMs();
    if (this.state.phase !== 'open' && waitMs > 0) await this.whenOpen(waitMs);
    return this.openSocket();
  }

  /**
   * The socket once the session is open again (a send whose connection closed under it waits for
   * the reconnect): another socket than `closed`, which the session may not have seen close yet.
   * Null when none was open within `timeoutMs`, or the session ended.
   */
  async whenOpen(timeoutMs: number, closed?: WASocket): Promise<WASocket | null> {
    const { state, slot } = this;
    const ready = () => state.phase === 'open' && slot.socket !== null && slot.socket !== closed;
    await state.changed.waitFor(() => ready() || state.phase === 'ended', timeoutMs);
    return ready() ? slot.socket : null;
  }

  /**
   * Worker shutdown: close without logout and give the lease back. A paired instance is marked
   * `connecting` (another worker adopts it); a pairing in progress cannot move and ends.
   *
   * Issue #39: once the socket is closed, the Signal state goes first: the key commits under way (a
   * decrypt's, a retry's, or a send's whose stanza waits for it: ADR 0069) and the creds are stored (`signalStateMs` at most) before
   * anything else. If they cannot be, the lease is not given back (a hand-over would fence those writes
   * out and the heir would start from keys the peers have seen used): the session ends without a
   * write and the lease is left to lapse. `rowWriteMs`: how long the `connecting` row write is waited
   * for before the lease goes anyway (a drain past its budget; the heir writes the row itself).
   * `reason`: the row's last disconnect reason (a rebalance's move says so; default `worker shutdown`).
   */
  shutdown(options: { signalStateMs?: number; rowWriteMs?: number; reason?: string } = {}): Promise<void> {
    const { state } = this;
    return state.run(async () => {
      if (state.phase === 'ended') return;
      if (state.phase === 'idle') return this.endings.end(true); // nothing started, nothing to say
      if (state.phase === 'pairing') return this.endings.stopDisconnected('worker shutdown');
      this.slot.detach();
      if (state.auth && !(await state.auth.settle(options.signalStateMs ?? SIGNAL_STATE_SETTLE_MS))) {
        return this.endings.abort('worker shutdown: the Signal state could not be stored; the lease is left to lapse');
      }
      const reason = options.reason ?? 'worker shutdown';
      const written = state.write({ patch: { status: 'connecting', lastDisconnect: new Date(), lastDisconnectReason: reason }, event: {} });
      // Beside the row, the device lists the instance's sockets cached here: its next holder starts from them.
      const lists = state.services.sockets.deviceLists.export(this.instanceId);
      const kept = lists.length
        ? state.services.instances.keepDeviceLists(this.instanceId, lists).catch((error: unknown) => state.logger.warn({ err: error }, 'device lists not kept'))
        : undefined;
      const row = Promise.all([written, kept]);
      if (options.rowWriteMs === undefined) await row;
      else if (!(await settlesWithin(row, options.rowWriteMs)))
        state.logger.warn('worker shutdown: the connecting row not written in time; handing over anyway');
      await this.endings.end(true);
    });
  }

  private async beginConnect(request: ConnectRequest): Promise<void> {
    this.state.assertAlive();
    switch (this.state.phase) {
      case 'open':
      case 'pairing':
      case 'linking':
        return;
      case 'connecting':
        this.connection.cutBackoffShort();
        return;
      case 'idle':
        if (await this.connection.loadStoredAuth()) return this.connection.startReconnect(false);
        return this.pairing.start(request);
    }
  }

  private readyToReply(): boolean {
    switch (this.state.phase) {
      case 'pairing':
        return Boolean(this.state.row.qrcode || this.state.row.paircode || this.connection.failure);
      case 'connecting':
        return Boolean(this.connection.failure);
      case 'linking':
        return false;
      default:
        return true;
    }
  }

  private jidObject(): JidObject | null {
    const id = this.state.phase === 'open' ? this.state.auth?.creds.me?.id : undefined;
    const decoded = id ? jidDecode(id) : undefined;
    return decoded ? { user: decoded.user, agent: 0, device: decoded.device ?? 0, server: decoded.server } : null;
  }
}
