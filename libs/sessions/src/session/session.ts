import {
  ErrorCode,
  RpcError,
  type ConnectReply,
  type ConnectRequest,
  type HistoryRequest,
  type JidObject,
  type PresenceRequest,
  type PrivacySettings,
  type StatusPrivacy,
  type StatusReply,
} from '@gw/contracts';
import { FencedOutError, type AuthStateRepository, type InstanceEntity, type InstancePatch, type InstanceRepository, type Lease } from '@gw/persistence';
import { type Logger, metrics } from '@gw/platform';
import { randomBytes } from 'node:crypto';
import { toDataURL } from 'qrcode';
import { PostgresAuthState } from '../auth-state/postgres-auth-state';
import { DisconnectReason, disconnectStatusCode, jidDecode, type ConnectionState, type WASocket, type WAVersion } from '../baileys';
import type { SessionWorkerConfig } from '../config/session-worker.config';
import { chooseBrowserProfile, normaliseSystemName } from '../socket/browser-profile';
import { onCompanionRegRefresh, withAdvSecret } from '../socket/companion-reg-refresh';
import { forgetHistoryFor, requestHistoryFor } from '../socket/history-sync-limit';
import { PairingCodeRefusedError, requestPairingCode } from '../socket/pairing-code';
import type { SocketFactory } from '../socket/socket-factory';
import { formatWaVersion } from '../socket/wa-version';
import { classifyClose, reconnectDelay, unreachableReason } from './disconnect-reason';
import { readPrivacySettings, readStatusPrivacy, writePrivacySettings } from './privacy-settings';
import type { HandshakeGate } from './handshake-gate';
import { ChangeSignal, SerialQueue } from './serial-queue';
import type { SessionStateWriter, StateChange } from './session-state-writer';
import type { SocketObserver } from './socket-observer';
import type { PacedWait, ReconnectPacer } from './reconnect-pacer';

export interface SessionServices {
  config: SessionWorkerConfig;
  instances: InstanceRepository;
  authStates: AuthStateRepository;
  writer: SessionStateWriter;
  sockets: SocketFactory;
  /** The worker's bound on reconnect handshakes at once. */
  handshakes: HandshakeGate;
  /** The worker's reconnect backoffs, cut short together when the server is reachable again. */
  pacer: ReconnectPacer;
  observers: readonly SocketObserver[];
  logger: Logger;
}

/** Told when a session is over; `release` is false when the lease was lost (nothing may be written). */
export interface SessionOwner {
  sessionEnded(session: Session, outcome: { release: boolean }): Promise<void>;
}

/**
 * - idle: claimed, nothing started yet
 * - pairing: new pairing, socket waits for a QR scan or the pairing code (credentials in memory)
 * - linking: the phone confirmed (pair-success); credentials are stored; waiting for 515 → login
 * - connecting: paired, socket (re)connecting, possibly after a backoff delay
 * - open: connected and logged in
 * - ended: closed for good; the owner has been told
 */
export type SessionPhase = 'idle' | 'pairing' | 'linking' | 'connecting' | 'open' | 'ended';

interface Pairing {
  mode: 'qr' | 'code';
  phone?: string;
  history: HistoryRequest;
  codeRequested: boolean;
  identityKey: Uint8Array;
  /** The QR text Baileys last showed (re-rendered with a new ADV secret on companion_reg_refresh). */
  qr?: string;
}

/**
 * A 440 ("replaced") this soon after the session dropped one of its own sockets that was still logging
 * in is that socket's late login, not another client: WhatsApp serves the newest login of a device.
 */
const OWN_SOCKET_REPLACES_MS = 30_000;

/** A command reached a session that has just ended (the bus maps it to `No session`). */
export class SessionEndedError extends Error {
  constructor(instanceId: string) {
    super(`session ${instanceId} has ended`);
    this.name = 'SessionEndedError';
  }
}

/**
 * One held instance: its Baileys socket, its credentials and the truth about its connection.
 * Every socket event and command runs on one serial queue; every status change is written with its
 * `connection` event under the lease. Sockets are numbered: events of a replaced socket are ignored.
 */
export class Session {
  private phase: SessionPhase = 'idle';
  private auth: PostgresAuthState | null = null;
  private socket: WASocket | null = null;
  private detachObservers: Array<() => void> = [];
  private generation = 0;
  private pairing: Pairing | null = null;
  private expiryTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: PacedWait | undefined;
  /** Frees this session's slot in the worker's HandshakeGate (held from a reconnect's socket until it logs in or closes). */
  private handshakeRelease: (() => void) | undefined;
  /** The reconnect waiting for its delay or for the gate; an older one that gets its turn steps aside. */
  private reconnectTicket = 0;
  /**
   * The reconnect ticket whose request read or wrote the row (the adoption's read, startReconnect's
   * write answering the row as stored): its socket opens with that row, not read once more (issue #38).
   */
  private rowReadForTicket = -1;
  /** When this session last dropped a socket of its own that was still open or logging in (see onClose's 440). */
  private replacedOwnSocketAt = 0;
  private attempt = 0;
  /** The WhatsApp Web version the current socket logs in with (a 405 names it). */
  private socketVersion: WAVersion | undefined;
  /** Why WhatsApp refused the pairing this session ended on; the connect waiting for it gets the error. */
  private pairingRefusal: string | undefined;
  /** Why the last socket could not reach WhatsApp (refused, no route, no DNS); cleared once it is reached. */
  private connectFailure: string | undefined;
  /** The last close's reason and how many closes in a row had it: the same failure is logged once, then every 10th. */
  private lastClose = { reason: '', repeats: 0 };
  /** Until when a send waits for the first open of a session adopted from another worker (0: not arriving). */
  private arrivingUntil = 0;
  /** Whether `row` is as the database last answered it (false after a write that failed and was applied in memory only). */
  private rowFromDatabase = true;
  private readonly queue = new SerialQueue();
  private readonly changed = new ChangeSignal();
  private readonly logger: Logger;

  constructor(
    private row: InstanceEntity,
    readonly lease: Lease,
    private readonly services: SessionServices,
    private readonly owner: SessionOwner,
  ) {
    this.logger = services.logger.child({ instanceId: row.id });
  }

  get instanceId(): string {
    return this.lease.instanceId;
  }

  get currentPhase(): SessionPhase {
    return this.phase;
  }

  get instance(): InstanceEntity {
    return this.row;
  }

  // --- commands ---------------------------------------------------------------------------------

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

  /**
   * The lease is gone (lost, fenced out, or the worker dies): stop everything at once and write
   * nothing, not even through tasks still queued. Synchronous on purpose.
   */
  abort(reason: string, options: { hard?: boolean } = {}): void {
    if (this.phase === 'ended') return;
    this.logger.warn({ reason }, 'session aborted without writing');
    this.phase = 'ended';
    this.clearTimers();
    this.auth?.close();
    this.detachSocket(options.hard);
    this.changed.notify();
    void this.owner.sessionEnded(this, { release: false }).catch((error: unknown) => this.logger.error({ err: error }, 'ending aborted session failed'));
  }

  // --- start paths ------------------------------------------------------------------------------

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

  /** Stored credentials of a linked device, if any (the truth; the `paired` column follows it). */
  private async loadStoredAuth(): Promise<boolean> {
    const auth = await PostgresAuthState.load(this.authOptions());
    if (!auth?.creds.me || !auth.creds.account) return false;
    this.auth = auth;
    return true;
  }

  /** A paired session (re)connects from stored auth: `connecting` is said at once, the socket opens when the gate lets it. */
  private async startReconnect(emitAlways: boolean, reason?: string): Promise<void> {
    this.phase = 'connecting';
    if (emitAlways || this.row.status !== 'connecting' || this.row.desiredState !== 'connected') {
      const patch: InstancePatch = { status: 'connecting', desiredState: 'connected', qrcode: '', paircode: '', pairingExpiresAt: null };
      if (reason) Object.assign(patch, { lastDisconnect: new Date(), lastDisconnectReason: reason });
      await this.write({ patch, event: {} });
    }
    // The row is as read for this request: the adoption's or connect's read moments ago, or the write's
    // answer (unless the write failed and the row is only what we know).
    const rowRead = this.rowFromDatabase;
    this.reconnectThroughGate(0);
    if (rowRead) this.rowReadForTicket = this.reconnectTicket;
  }

  private async startPairing(request: ConnectRequest): Promise<void> {
    const { config } = this.services;
    const mode = request.phone ? 'code' : 'qr';
    const ttl = mode === 'qr' ? config.qrTtlMs : config.pairCodeTtlMs;
    this.auth = PostgresAuthState.fresh(this.authOptions());
    const identityKey = this.auth.creds.signedIdentityKey.public;
    this.pairing = { mode, phone: request.phone, history: request.history, codeRequested: false, identityKey };
    requestHistoryFor(identityKey, request.history);
    this.phase = 'pairing';
    this.expiryTimer = setTimeout(() => void this.run(() => this.expirePairing()), ttl);
    // No event yet: the first QR / code write announces `connecting` with something to show.
    await this.write(
      {
        patch: {
          status: 'connecting',
          desiredState: 'connected',
          paired: false,
          qrcode: '',
          paircode: '',
          pairingExpiresAt: new Date(Date.now() + ttl),
          browser: chooseBrowserProfile(request.browser, this.row.browser),
          systemName: normaliseSystemName(request.systemName),
          historyDays: request.history.days,
          historyFullSync: request.history.fullSync,
          pairingRequestId: request.requestId,
        },
      },
      { required: true },
    );
    // The write answered the row as stored: no second read before the socket.
    await this.openNewSocket(undefined, true);
  }

  // --- socket -----------------------------------------------------------------------------------

  /**
   * `handshake`: the HandshakeGate ticket this socket holds until it logs in, shows a QR or closes.
   * `rowRead`: the row was read (or written and answered) for this very connect; else it is read again.
   */
  private async openNewSocket(handshake?: () => void, rowRead = false): Promise<void> {
    const auth = this.auth;
    if (!auth) {
      handshake?.();
      throw new Error('no credentials to connect with');
    }
    this.reconnectTicket += 1; // a reconnect still waiting is not needed any more
    this.detachSocket();
    // Taken after the old socket's detach, which gives back whatever ticket the session held.
    this.handshakeRelease = handshake;
    // Proxy (and browser) changes made through the API apply from the next connect on: a reconnect
    // after a close or a backoff reads the row again; a connect, an adoption or a restart read it
    // (or wrote it and got it back) when it was requested.
    if (!rowRead) await this.refreshInstance();
    if (this.phase === 'ended') return this.releaseHandshake();
    const generation = ++this.generation;
    const version = this.services.sockets.waVersion.version;
    let socket: WASocket;
    try {
      socket = this.services.sockets.create({
        auth: auth.state,
        instance: this.row,
        history: this.phase === 'pairing' ? (this.pairing?.history ?? null) : null,
        pairingCode: this.pairing?.mode === 'code',
        logger: this.logger,
      });
    } catch (error) {
      // A configuration Baileys refuses (e.g. a malformed proxy URL) will not heal by retrying.
      const reason = `cannot connect: ${(error as Error).message}`;
      this.logger.error({ err: error }, reason);
      void this.run(() => this.stopDisconnected(reason));
      return;
    }
    this.socket = socket;
    this.socketVersion = version;
    if (this.phase === 'pairing' && this.pairing?.mode === 'qr') {
      this.detachObservers.push(onCompanionRegRefresh(socket, () => void this.run(() => (generation === this.generation ? this.onRegRefresh() : undefined))));
    }
    socket.ev.on('connection.update', (update) => {
      void this.run(() => (generation === this.generation ? this.onConnectionUpdate(update) : undefined));
    });
    socket.ev.on('creds.update', (update) => {
      if (generation !== this.generation) return;
      if (!auth.isPersistent && (this.phase === 'linking' || this.phase === 'open')) void this.run(() => this.persistIfPending());
      void auth.saveCreds();
      if (update.me?.name && this.phase === 'open' && update.me.name !== this.row.profileName) {
        void this.run(() => this.write({ patch: { profileName: update.me?.name ?? '' } }));
      }
    });
    for (const observer of this.services.observers) {
      try {
        const detach = observer.attach({ instanceId: this.instanceId, lease: this.lease, socket, logger: this.logger });
        if (detach) this.detachObservers.push(detach);
      } catch (error) {
        this.logger.error({ err: error }, 'socket observer failed to attach');
      }
    }
  }

  /** Re-reads the row; a deleted instance ends the session (its lease row went with it). */
  private async refreshInstance(): Promise<void> {
    try {
      const fresh = await this.services.instances.findById(this.instanceId);
      if (fresh) {
        this.row = fresh;
        this.rowFromDatabase = true;
      } else void this.run(() => this.end(true));
    } catch (error) {
      this.logger.warn({ err: error }, 'reading the instance failed; connecting with what is known');
    }
  }

  /** Forgets the current socket (its events are ignored from now on) and closes it. */
  private detachSocket(hard = false): void {
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

  private async onConnectionUpdate(update: Partial<ConnectionState>): Promise<void> {
    if (this.phase === 'ended') return;
    // Logged in, closed, or showing a QR (waiting for a person, not for the CPU): this socket's
    // handshake is over, the next session's may start.
    if (update.connection === 'open' || update.connection === 'close' || update.qr) this.releaseHandshake();
    // WhatsApp was reached: what kept it out of reach is over.
    if (update.qr || update.connection === 'open') this.connectFailure = undefined;
    if (update.connection === 'open') this.lastClose = { reason: '', repeats: 0 };
    if (update.qr) await this.onQr(update.qr);
    if (update.isNewLogin) await this.onPairSuccess();
    if (update.connection === 'open') await this.onOpen();
    if (update.connection === 'close') await this.onClose(update.lastDisconnect?.error);
  }

  private async onQr(qr: string): Promise<void> {
    const pairing = this.pairing;
    if (this.phase !== 'pairing' || !pairing) return;
    if (pairing.mode === 'qr') {
      pairing.qr = qr;
      await this.showQr();
    } else if (!pairing.codeRequested && pairing.phone && this.socket) {
      // The socket is ready once it shows its first QR; the code replaces QR scanning.
      pairing.codeRequested = true;
      let code: string;
      try {
        // Only a code WhatsApp accepted is shown; a refusal ends the pairing and fails the connect.
        code = await requestPairingCode(this.socket, pairing.phone, this.services.sockets.browser(this.row));
      } catch (error) {
        if (error instanceof PairingCodeRefusedError) {
          this.pairingRefusal = error.message;
          return this.stopDisconnected(error.message);
        }
        // This socket shows no further QR to retry on: start over on a new one (a new code).
        this.logger.warn({ err: error }, 'requesting a pairing code failed; reconnecting');
        this.detachSocket();
        return this.scheduleReconnect();
      }
      await this.write({ patch: { status: 'connecting', paircode: formatPairingCode(code) }, event: {} });
    }
  }

  /** Every QR Baileys shows (and every re-render) replaces the image and is announced, with the current ADV secret. */
  private async showQr(): Promise<void> {
    const qr = this.pairing?.qr;
    if (!qr || !this.auth) return;
    await this.write({ patch: { status: 'connecting', qrcode: await toDataURL(withAdvSecret(qr, this.auth.creds.advSecretKey)) }, event: {} });
  }

  /**
   * WhatsApp retired the registration material the QR shows (companion_reg_refresh): a new ADV
   * secret, the current ref re-rendered with it, as WhatsApp Web does (Baileys PR #2765). Baileys
   * checks pair-success against `creds.advSecretKey`, so the scan of the new QR links.
   */
  private async onRegRefresh(): Promise<void> {
    if (this.phase !== 'pairing' || this.pairing?.mode !== 'qr' || !this.auth) return;
    this.logger.info('companion registration refreshed by WhatsApp; new ADV secret, QR re-rendered');
    this.auth.creds.advSecretKey = randomBytes(32).toString('base64');
    await this.showQr();
  }

  /** The phone confirmed the link: from now on the credentials are real and belong in Postgres. */
  private async onPairSuccess(): Promise<void> {
    if (this.phase !== 'pairing' || !this.auth) return;
    clearTimeout(this.expiryTimer);
    this.phase = 'linking';
    if (this.pairing) forgetHistoryFor(this.pairing.identityKey);
    this.pairing = null;
    await this.persistIfPending();
    // `paired` lets another worker adopt the instance should this one die before `open`.
    await this.write({ patch: { paired: true, qrcode: '', paircode: '', pairingExpiresAt: null } });
  }

  /**
   * First flush of a new pairing's credentials. A database failure is logged and retried on the next
   * `creds.update` (the socket works from memory meanwhile); fencing stops the session.
   */
  private async persistIfPending(): Promise<void> {
    const auth = this.auth;
    if (!auth || auth.isPersistent || this.phase === 'ended') return;
    try {
      await this.guardFencing(() => auth.persist());
    } catch (error) {
      if (error instanceof FencedOutError) throw error;
      this.logger.error({ err: error }, 'storing the new credentials failed; will retry');
    }
  }

  private async onOpen(): Promise<void> {
    const auth = this.auth;
    const me = auth?.creds.me;
    if (!auth || !me) return;
    await this.persistIfPending();
    // `linking`: a pairing just finished; any other phase opened with stored credentials.
    metrics().recordConnect(this.phase === 'linking' ? 'paired' : 'reconnect', this.row.id);
    // Back after failed tries: the server is reachable again, the worker's other backoffs are cut short.
    if (this.attempt > 0) this.services.pacer.reachable();
    this.phase = 'open';
    this.attempt = 0;
    this.arrivingUntil = 0;
    const platform = auth.creds.platform ?? '';
    await this.write({
      patch: {
        status: 'connected',
        desiredState: 'connected',
        paired: true,
        owner: jidDecode(me.id)?.user ?? '',
        jid: me.id,
        lid: me.lid ?? '',
        profileName: me.name ?? me.verifiedName ?? this.row.profileName,
        platform,
        // smba / smbi: the WhatsApp Business apps
        isBusiness: platform.startsWith('smb'),
        qrcode: '',
        paircode: '',
        pairingExpiresAt: null,
      },
      event: {},
    });
  }

  private async onClose(error: Error | undefined): Promise<void> {
    this.detachSocket();
    const statusCode = disconnectStatusCode(error);
    let verdict = classifyClose(statusCode);
    if (statusCode === DisconnectReason.connectionReplaced && Date.now() - this.replacedOwnSocketAt < OWN_SOCKET_REPLACES_MS) {
      // Replaced by a socket of our own this session dropped moments ago whose login reached WhatsApp
      // late (a loaded worker or server): not another client. Reconnect instead of giving up.
      this.replacedOwnSocketAt = 0;
      verdict = { kind: 'transient', reason: '440: replaced by an earlier socket of this session' };
    }
    const unreachable = unreachableReason(error);
    // WhatsApp out of reach is retried with backoff for as long as it lasts: its line is logged the
    // first time, then every 10th time with the count, not once per try forever.
    const reason = unreachable ?? error?.message ?? '';
    const repeats = reason === this.lastClose.reason ? ++this.lastClose.repeats : 0;
    this.lastClose = { reason, repeats };
    const fields = { verdict, phase: this.phase, err: error?.message, ...(repeats ? { repeated: repeats } : {}) };
    if (repeats % 10 === 0) this.logger.info(fields, 'socket closed');
    else this.logger.debug(fields, 'socket closed');
    metrics().recordDisconnect(verdict.kind.replace('-', '_'), statusCode, this.row.id);

    if (verdict.kind === 'outdated') return this.onClientOutdated(verdict.reason);
    if (this.phase === 'pairing') {
      if (verdict.kind === 'logged-out' || verdict.kind === 'terminal') return this.stopDisconnected(verdict.reason);
      if (unreachable && unreachable !== this.connectFailure) {
        // The connect waiting for a QR answers now, saying why, and so does /instance/status.
        this.connectFailure = unreachable;
        await this.write({ patch: { lastDisconnect: new Date(), lastDisconnectReason: unreachable } });
      }
      return this.scheduleReconnect();
    }
    switch (verdict.kind) {
      case 'restart':
        // 515 (after pairing, or a stream error of the server): a new socket at once, through the gate.
        if (this.phase === 'open') {
          await this.write({ patch: { status: 'connecting', lastDisconnect: new Date(), lastDisconnectReason: '515: restart required' }, event: {} });
          this.phase = 'connecting';
        }
        return this.reconnectThroughGate(0);
      case 'logged-out':
        return this.loggedOut(verdict.reason);
      case 'terminal':
        return this.stopDisconnected(verdict.reason);
      case 'transient':
        if (this.phase === 'open' || this.row.status !== 'connecting') {
          await this.write({ patch: { status: 'connecting', lastDisconnect: new Date(), lastDisconnectReason: unreachable ?? verdict.reason }, event: {} });
        } else if (unreachable && unreachable !== this.connectFailure) {
          await this.write({ patch: { lastDisconnect: new Date(), lastDisconnectReason: unreachable } });
        }
        this.connectFailure = unreachable;
        this.phase = 'connecting';
        return this.scheduleReconnect();
    }
  }

  /**
   * 405 at login: WhatsApp refused our WhatsApp Web version. With a newer one learnt (the configured
   * page) the session logs in again at once with the same credentials (no new QR); else it retries
   * with backoff. The row stays `connecting` and says why.
   */
  private async onClientOutdated(reason: string): Promise<void> {
    const used = this.socketVersion ?? this.services.sockets.waVersion.version;
    const newer = await this.services.sockets.waVersion.newerThan(used, this.logger);
    if (this.phase === 'ended') return;
    const why = `${reason} (WhatsApp Web ${formatWaVersion(used)}); ${newer ? `logging in again with ${formatWaVersion(newer)}` : 'no newer version known yet'}`;
    this.logger.warn({ used: formatWaVersion(used), newer: newer && formatWaVersion(newer) }, 'WhatsApp refused the client version');
    if (this.phase !== 'pairing') {
      await this.write({ patch: { status: 'connecting', lastDisconnect: new Date(), lastDisconnectReason: why }, event: {} });
      this.phase = 'connecting';
    }
    if (!newer) return this.scheduleReconnect();
    this.attempt = 0;
    return this.reconnectThroughGate(0);
  }

  private scheduleReconnect(): void {
    const { reconnectBaseMs, reconnectMaxMs } = this.services.config;
    this.reconnectThroughGate(reconnectDelay(this.attempt++, reconnectBaseMs, reconnectMaxMs));
  }

  /**
   * Every socket of a session after its first pairing socket opens here: after `delayMs` (the
   * jittered backoff, cut short by the worker's ReconnectPacer once the server is reachable again),
   * then once the worker's HandshakeGate lets it. After a server restart every
   * socket closes at once, after a takeover or a late lease renewal hundreds of sessions start at once:
   * a handshake costs CPU (noise, Signal), and unbounded they time each other out (issue #34). A newer
   * request replaces one still waiting (the older one gives its slot back when it gets it).
   */
  private reconnectThroughGate(delayMs: number): void {
    this.reconnectTimer?.cancel();
    const ticket = ++this.reconnectTicket;
    this.reconnectTimer = this.services.pacer.wait(this, delayMs, () => {
      this.reconnectTimer = undefined;
      void this.services.handshakes
        .acquire((release) => this.onHandshakeHoldEnd(release))
        .then((release) =>
          this.run(() => {
            if (this.phase === 'ended' || ticket !== this.reconnectTicket) return release();
            return this.reconnectNow(release, ticket === this.rowReadForTicket);
          }).catch((error: unknown) => {
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
    const socket = this.socket;
    if (this.handshakeRelease !== release || !socket || this.phase === 'ended') return release();
    this.logger.warn(
      { holdMs: this.services.handshakes.holdMs },
      'handshake not finished within the gate hold; closing the socket and queueing the reconnect again',
    );
    this.detachSocket(true);
    release();
    void this.run(() => {
      if (this.socket === null && (this.phase === 'connecting' || this.phase === 'pairing' || this.phase === 'linking')) this.scheduleReconnect();
    });
  }

  private releaseHandshake(): void {
    const release = this.handshakeRelease;
    this.handshakeRelease = undefined;
    release?.();
  }

  private async reconnectNow(handshake?: () => void, rowRead = false): Promise<void> {
    if (this.phase === 'pairing' && this.pairing?.mode === 'code' && this.auth) {
      // The code belonged to the dead socket; a login-shaped half state (me set) would be refused.
      this.auth.creds.me = undefined;
      this.auth.creds.pairingCode = undefined;
      this.pairing.codeRequested = false;
    }
    if (this.phase === 'pairing' || this.phase === 'connecting' || this.phase === 'linking') await this.openNewSocket(handshake, rowRead);
    else handshake?.();
  }

  // --- endings ----------------------------------------------------------------------------------

  private async expirePairing(): Promise<void> {
    if (this.phase !== 'pairing') return;
    await this.stopDisconnected(this.pairing?.mode === 'code' ? 'pairing code expired' : 'QR code expired');
  }

  /** 401: the device is unlinked. Credentials go first (fenced), then the row says why. */
  private async loggedOut(reason: string): Promise<void> {
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
  private async stopDisconnected(reason: string, status: 'disconnected' | 'hibernated' = 'disconnected'): Promise<void> {
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
  private async forgetUnpairedDevice(): Promise<void> {
    await this.write({ patch: { status: 'disconnected', paired: false, desiredState: 'disconnected', qrcode: '', paircode: '' }, event: {} });
    await this.end(true);
  }

  private async end(release: boolean): Promise<void> {
    if (this.phase === 'ended') return;
    this.phase = 'ended';
    this.clearTimers();
    this.detachSocket();
    this.auth?.close();
    this.changed.notify();
    await this.owner.sessionEnded(this, { release });
  }

  private clearTimers(): void {
    clearTimeout(this.expiryTimer);
    this.reconnectTimer?.cancel();
    this.reconnectTimer = undefined;
    if (this.pairing) forgetHistoryFor(this.pairing.identityKey);
  }

  // --- plumbing ---------------------------------------------------------------------------------

  /**
   * Queues a task. Failures never escape as unhandled rejections: fencing aborts the session,
   * anything else is logged and re-thrown to the caller awaiting it (if any).
   */
  private run<T>(task: () => Promise<T> | T): Promise<T> {
    const result = this.queue.run(task);
    result.catch((error: unknown) => {
      if (error instanceof FencedOutError) this.abort('fenced out');
      else if (!(error instanceof SessionEndedError) && !(error instanceof RpcError)) this.logger.error({ err: error }, 'session task failed');
    });
    this.changedAfter(result);
    return result;
  }

  private changedAfter(result: Promise<unknown>): void {
    void result.then(
      () => this.changed.notify(),
      () => this.changed.notify(),
    );
  }

  /**
   * Writes a state change with its event. Fencing always stops the session. Other failures (the
   * database is down) are logged and the state machine carries on with the in-memory view, so a
   * socket keeps reconnecting and ending even when its row cannot be updated; `required` writes
   * (the start of a pairing) fail the command instead.
   */
  private async write(change: StateChange, options: { required?: boolean } = {}): Promise<void> {
    if (this.phase === 'ended') throw new SessionEndedError(this.instanceId);
    try {
      this.row = await this.guardFencing(() => this.services.writer.write(this.lease, this.row, change));
      this.rowFromDatabase = true;
    } catch (error) {
      if (error instanceof FencedOutError || options.required) throw error;
      this.logger.error({ err: error, patch: Object.keys(change.patch) }, 'writing the session state failed; carrying on');
      this.row = { ...this.row, ...change.patch } as InstanceEntity;
      this.rowFromDatabase = false;
    }
    this.changed.notify();
  }

  private async guardFencing<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof FencedOutError) this.abort('fenced out');
      throw error;
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

  private assertAlive(): void {
    if (this.phase === 'ended') throw new RpcError(ErrorCode.NoSession, 'No session');
  }

  private authOptions() {
    return {
      repository: this.services.authStates,
      lease: this.lease,
      logger: this.logger,
      onFenced: () => this.abort('auth-state write fenced out'),
      // Issue #39: a key write waits out a database outage up to the lease's lifetime; one that still
      // fails stops the session before Baileys goes on with keys that are not stored.
      outageWaitMs: this.services.config.leaseTtlMs,
      onWriteFailed: () => this.abort('auth-state write failed'),
    };
  }
}

/** `ABCD1234` → `ABCD-1234`, the form the API shows. */
export function formatPairingCode(code: string): string {
  return code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
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
