import type { InstancePatch } from '@gw/persistence';
import { metrics } from '@gw/platform';
import { PostgresAuthState } from '../auth-state/postgres-auth-state';
import { DisconnectReason, disconnectStatusCode, jidDecode, type ConnectionState, type WASocket, type WAVersion } from '../baileys';
import { onCompanionRegRefresh } from '../socket/companion-reg-refresh';
import { formatWaVersion } from '../socket/wa-version';
import { classifyClose, unreachableReason } from './disconnect-reason';
import { ReconnectScheduler } from './reconnect-scheduler';
import type { SessionEndings } from './session-endings';
import type { SessionState } from './session-state';
import type { SocketSlot } from './socket-slot';

/**
 * A 440 ("replaced") this soon after the session dropped one of its own sockets that was still logging
 * in is that socket's late login, not another client: WhatsApp serves the newest login of a device.
 */
const OWN_SOCKET_REPLACES_MS = 30_000;

/** What a pairing socket shows, handled by SessionPairing. */
export interface PairingEvents {
  /** A QR Baileys shows. */
  onQr(qr: string): Promise<void>;
  /** The phone confirmed the link. */
  onPairSuccess(): Promise<void>;
  /** WhatsApp retired the registration material the QR shows. */
  onRegRefresh(): Promise<void>;
}

/**
 * The connect and reconnect path of a session: sockets opened from stored credentials through the
 * worker's ReconnectPacer and HandshakeGate (ReconnectScheduler), their connection events (open, close
 * and why), and the backoff after a close. What a pairing socket shows goes to PairingEvents.
 */
/** An adopted session that opens this long after its adoption began is logged with where the time went. */
const SLOW_ARRIVAL_MS = 1_000;

export class SessionConnection {
  private readonly reconnects: ReconnectScheduler;
  /** The WhatsApp Web version the current socket logs in with (a 405 names it). */
  private socketVersion: WAVersion | undefined;
  /** Why the last socket could not reach WhatsApp (refused, no route, no DNS); cleared once it is reached. */
  private connectFailure: string | undefined;
  /** The last close's reason and how many closes in a row had it: the same failure is logged once, then every 10th. */
  private lastClose = { reason: '', repeats: 0 };
  /** Until when a send waits for the first open of a session adopted from another worker (0: not arriving). */
  private arrivingUntil = 0;
  /** When the adoption under way began, and when its socket was created (0: not yet): logged when it opens late. */
  private arrival: { startedAt: number; socketAt: number } | undefined;

  constructor(
    private readonly state: SessionState,
    private readonly slot: SocketSlot,
    private readonly endings: SessionEndings,
    private readonly pairing: PairingEvents,
  ) {
    this.reconnects = new ReconnectScheduler(state, slot, (handshake, rowRead) => this.reconnectNow(handshake, rowRead));
  }

  /** Why the last socket could not reach WhatsApp, until it is reached. */
  /** The session is starting or connecting and no try has failed since it was last open (or since it started). */
  get opening(): boolean {
    return (this.state.phase === 'idle' || this.state.phase === 'connecting') && this.reconnects.failedAttempts === 0;
  }

  get failure(): string | undefined {
    return this.connectFailure;
  }

  /** A session adopted from another worker: sends wait for its first open until `untilMs`. */
  expectArrival(untilMs: number): void {
    this.arrivingUntil = untilMs;
    this.arrival = { startedAt: Date.now(), socketAt: 0 };
  }

  /** How long a send may still wait for the first open of an arriving session (≤ 0: not arriving). */
  arrivalWaitMs(): number {
    return this.arrivingUntil - Date.now();
  }

  /** Stored credentials of a linked device, if any (the truth; the `paired` column follows it). */
  async loadStoredAuth(): Promise<boolean> {
    const auth = await PostgresAuthState.load(this.state.authOptions(), this.state.takeStoredCreds());
    if (!auth?.creds.me || !auth.creds.account) return false;
    this.state.auth = auth;
    return true;
  }

  /** A paired session (re)connects from stored auth: `connecting` is said at once, the socket opens when the gate lets it. */
  async startReconnect(emitAlways: boolean, reason?: string): Promise<void> {
    const { state } = this;
    state.phase = 'connecting';
    if (emitAlways || state.row.status !== 'connecting' || state.row.desiredState !== 'connected') {
      const patch: InstancePatch = { status: 'connecting', desiredState: 'connected', qrcode: '', paircode: '', pairingExpiresAt: null };
      if (reason) Object.assign(patch, { lastDisconnect: new Date(), lastDisconnectReason: reason });
      await state.write({ patch, event: {} });
    }
    // The row is as read for this request: the adoption's or connect's read moments ago, or the write's
    // answer (unless the write failed and the row is only what we know).
    const rowRead = state.rowFromDatabase;
    this.reconnects.throughGate(0);
    if (rowRead) this.reconnects.markRowRead();
  }

  /** Graceful reconnect: the socket closed without logout, a new one from stored auth now. */
  async restart(reason: string): Promise<void> {
    this.slot.detach();
    this.reconnects.cancel();
    this.reconnects.resetAttempts();
    await this.startReconnect(true, reason);
  }

  /** A pending backoff is cut short: somebody is waiting for this instance now. */
  cutBackoffShort(): void {
    if (!this.reconnects.backingOff) return;
    this.reconnects.resetAttempts();
    this.connectFailure = undefined; // this try's own outcome answers
    this.reconnects.throughGate(0);
  }

  scheduleReconnect(): void {
    this.reconnects.schedule();
  }

  cancelReconnect(): void {
    this.reconnects.cancel();
  }

  /**
   * `handshake`: the HandshakeGate ticket this socket holds until it logs in, shows a QR or closes.
   * `rowRead`: the row was read (or written and answered) for this very connect; else it is read again.
   */
  async openNewSocket(handshake?: () => void, rowRead = false): Promise<void> {
    const { state, slot } = this;
    const auth = state.auth;
    if (!auth) {
      handshake?.();
      throw new Error('no credentials to connect with');
    }
    this.reconnects.supersede(); // a reconnect still waiting is not needed any more
    slot.detach();
    // Taken after the old socket's detach, which gives back whatever ticket the session held.
    slot.holdHandshake(handshake);
    // Proxy (and browser) changes made through the API apply from the next connect on: a reconnect
    // after a close or a backoff reads the row again; a connect, an adoption or a restart read it
    // (or wrote it and got it back) when it was requested.
    if (!rowRead) await this.refreshInstance();
    if (state.phase === 'ended') return slot.releaseHandshake();
    if (this.arrival && !this.arrival.socketAt) this.arrival.socketAt = Date.now();
    const generation = slot.numberNext();
    const version = state.services.sockets.waVersion.version;
    let socket: WASocket;
    try {
      socket = state.services.sockets.create({
        auth: auth.state,
        instance: state.row,
        history: state.phase === 'pairing' ? (state.pairing?.history ?? null) : null,
        pairingCode: state.pairing?.mode === 'code',
        logger: state.logger,
        keysStored: () => auth.keysStored(),
      });
    } catch (error) {
      // A configuration Baileys refuses (e.g. a malformed proxy URL) will not heal by retrying.
      const reason = `cannot connect: ${(error as Error).message}`;
      state.logger.error({ err: error }, reason);
      void state.run(() => this.endings.stopDisconnected(reason));
      return;
    }
    slot.hold(socket);
    this.socketVersion = version;
    if (state.phase === 'pairing' && state.pairing?.mode === 'qr') {
      slot.onDetach(onCompanionRegRefresh(socket, () => void state.run(() => (slot.isCurrent(generation) ? this.pairing.onRegRefresh() : undefined))));
    }
    socket.ev.on('connection.update', (update) => {
      void state.run(() => (slot.isCurrent(generation) ? this.onConnectionUpdate(update) : undefined));
    });
    socket.ev.on('creds.update', (update) => {
      if (!slot.isCurrent(generation)) return;
      if (!auth.isPersistent && (state.phase === 'linking' || state.phase === 'open')) void state.run(() => state.persistIfPending());
      void auth.saveCreds();
      if (update.me?.name && state.phase === 'open' && update.me.name !== state.row.profileName) {
        void state.run(() => state.write({ patch: { profileName: update.me?.name ?? '' } }));
      }
    });
    for (const observer of state.services.observers) {
      try {
        const detach = observer.attach({ instanceId: state.instanceId, lease: state.lease, socket, logger: state.logger, ownPicture: state.ownPicture });
        if (detach) slot.onDetach(detach);
      } catch (error) {
        state.logger.error({ err: error }, 'socket observer failed to attach');
      }
    }
  }

  /** Re-reads the row; a deleted instance ends the session (its lease row went with it). */
  private async refreshInstance(): Promise<void> {
    const { state } = this;
    try {
      const fresh = await state.services.instances.findById(state.instanceId);
      if (fresh) {
        state.row = fresh;
        state.rowFromDatabase = true;
        // The gateway writes the picture too (POST /profile/image): the stored one is the row's.
        state.ownPicture.url = fresh.profilePicUrl;
      } else void state.run(() => this.endings.end(true));
    } catch (error) {
      state.logger.warn({ err: error }, 'reading the instance failed; connecting with what is known');
    }
  }

  private async onConnectionUpdate(update: Partial<ConnectionState>): Promise<void> {
    if (this.state.phase === 'ended') return;
    // Logged in, closed, or showing a QR (waiting for a person, not for the CPU): this socket's
    // handshake is over, the next session's may start.
    if (update.connection === 'open' || update.connection === 'close' || update.qr) this.slot.releaseHandshake();
    // WhatsApp was reached: what kept it out of reach is over.
    if (update.qr || update.connection === 'open') this.connectFailure = undefined;
    if (update.connection === 'open') this.lastClose = { reason: '', repeats: 0 };
    if (update.qr) await this.pairing.onQr(update.qr);
    if (update.isNewLogin) await this.pairing.onPairSuccess();
    if (update.connection === 'open') await this.onOpen();
    if (update.connection === 'close') await this.onClose(update.lastDisconnect?.error);
  }

  /** An adopted session that took long to open says where the time went (bench/cluster reads these at info). */
  private logSlowArrival(): void {
    const arrival = this.arrival;
    this.arrival = undefined;
    if (!arrival || Date.now() - arrival.startedAt < SLOW_ARRIVAL_MS) return;
    const socketAfterMs = arrival.socketAt ? arrival.socketAt - arrival.startedAt : null;
    this.state.logger.info({ arrivalMs: Date.now() - arrival.startedAt, socketAfterMs }, 'an adopted session opened late');
  }

  private async onOpen(): Promise<void> {
    const { state } = this;
    const auth = state.auth;
    const me = auth?.creds.me;
    if (!auth || !me) return;
    await state.persistIfPending();
    // `linking`: a pairing just finished; any other phase opened with stored credentials.
    metrics().recordConnect(state.phase === 'linking' ? 'paired' : 'reconnect', state.row.id);
    // Back after failed tries: the server is reachable again, the worker's other backoffs are cut short.
    if (this.reconnects.failedAttempts > 0) state.services.pacer.reachable();
    state.phase = 'open';
    this.reconnects.resetAttempts();
    this.arrivingUntil = 0;
    this.logSlowArrival();
    const platform = auth.creds.platform ?? '';
    await state.write({
      patch: {
        status: 'connected',
        desiredState: 'connected',
        paired: true,
        owner: jidDecode(me.id)?.user ?? '',
        jid: me.id,
        lid: me.lid ?? '',
        profileName: me.name ?? me.verifiedName ?? state.row.profileName,
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
    const { state } = this;
    this.slot.detach();
    const statusCode = disconnectStatusCode(error);
    let verdict = classifyClose(statusCode);
    if (statusCode === DisconnectReason.connectionReplaced && this.slot.replacedOwnSocketWithin(OWN_SOCKET_REPLACES_MS)) {
      // Replaced by a socket of our own this session dropped moments ago whose login reached WhatsApp
      // late (a loaded worker or server): not another client. Reconnect instead of giving up.
      verdict = { kind: 'transient', reason: '440: replaced by an earlier socket of this session' };
    }
    const unreachable = unreachableReason(error);
    // WhatsApp out of reach is retried with backoff for as long as it lasts: its line is logged the
    // first time, then every 10th time with the count, not once per try forever.
    const reason = unreachable ?? error?.message ?? '';
    const repeats = reason === this.lastClose.reason ? ++this.lastClose.repeats : 0;
    this.lastClose = { reason, repeats };
    const fields = { verdict, phase: state.phase, err: error?.message, ...(repeats ? { repeated: repeats } : {}) };
    if (repeats % 10 === 0) state.logger.info(fields, 'socket closed');
    else state.logger.debug(fields, 'socket closed');
    metrics().recordDisconnect(verdict.kind.replace('-', '_'), statusCode, state.row.id);

    if (verdict.kind === 'outdated') return this.onClientOutdated(verdict.reason);
    if (state.phase === 'pairing') {
      if (verdict.kind === 'logged-out' || verdict.kind === 'terminal') return this.endings.stopDisconnected(verdict.reason);
      if (unreachable && unreachable !== this.connectFailure) {
        // The connect waiting for a QR answers now, saying why, and so does /instance/status.
        this.connectFailure = unreachable;
        await state.write({ patch: { lastDisconnect: new Date(), lastDisconnectReason: unreachable } });
      }
      return this.reconnects.schedule();
    }
    switch (verdict.kind) {
      case 'restart':
        // 515 (after pairing, or a stream error of the server): a new socket at once, through the gate.
        if (state.phase === 'open') {
          await state.write({ patch: { status: 'connecting', lastDisconnect: new Date(), lastDisconnectReason: '515: restart required' }, event: {} });
          state.phase = 'connecting';
        }
        return this.reconnects.throughGate(0);
      case 'logged-out':
        return this.endings.loggedOut(verdict.reason);
      case 'terminal':
        return this.endings.stopDisconnected(verdict.reason);
      case 'transient':
        if (state.phase === 'open' || state.row.status !== 'connecting') {
          await state.write({ patch: { status: 'connecting', lastDisconnect: new Date(), lastDisconnectReason: unreachable ?? verdict.reason }, event: {} });
        } else if (unreachable && unreachable !== this.connectFailure) {
          await state.write({ patch: { lastDisconnect: new Date(), lastDisconnectReason: unreachable } });
        }
        this.connectFailure = unreachable;
        state.phase = 'connecting';
        return this.reconnects.schedule();
    }
  }

  /**
   * 405 at login: WhatsApp refused our WhatsApp Web version. With a newer one learnt (the configured
   * page) the session logs in again at once with the same credentials (no new QR); else it retries
   * with backoff. The row stays `connecting` and says why.
   */
  private async onClientOutdated(reason: string): Promise<void> {
    const { state } = this;
    const used = this.socketVersion ?? state.services.sockets.waVersion.version;
    const newer = await state.services.sockets.waVersion.newerThan(used, state.logger);
    if (state.phase === 'ended') return;
    const why = `${reason} (WhatsApp Web ${formatWaVersion(used)}); ${newer ? `logging in again with ${formatWaVersion(newer)}` : 'no newer version known yet'}`;
    state.logger.warn({ used: formatWaVersion(used), newer: newer && formatWaVersion(newer) }, 'WhatsApp refused the client version');
    if (state.phase !== 'pairing') {
      await state.write({ patch: { status: 'connecting', lastDisconnect: new Date(), lastDisconnectReason: why }, event: {} });
      state.phase = 'connecting';
    }
    if (!newer) return this.reconnects.schedule();
    this.reconnects.resetAttempts();
    return this.reconnects.throughGate(0);
  }

  private async reconnectNow(handshake?: () => void, rowRead = false): Promise<void> {
    const { state } = this;
    if (state.phase === 'pairing' && state.pairing?.mode === 'code' && state.auth) {
      // The code belonged to the dead socket; a login-shaped half state (me set) would be refused.
      state.auth.creds.me = undefined;
      state.auth.creds.pairingCode = undefined;
      state.pairing.codeRequested = false;
    }
    if (state.phase === 'pairing' || state.phase === 'connecting' || state.phase === 'linking') await this.openNewSocket(handshake, rowRead);
    else handshake?.();
  }
}
