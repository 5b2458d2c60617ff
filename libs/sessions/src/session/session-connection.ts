import { FencedOutError, type InstancePatch } from '@gw/persistence';
import { metrics } from '@gw/platform';
import { PostgresAuthState } from '../auth-state/postgres-auth-state';
import { DisconnectReason, disconnectStatusCode, jidDecode, type ConnectionState, type WASocket } from '../baileys';
import { onCompanionRegRefresh } from '../socket/companion-reg-refresh';
import { formatWaVersion } from '../socket/wa-version';
import { classifyClose, reconnectDelay, unreachableReason } from './disconnect-reason';
import { SessionEndings } from './session-endings';

/**
 * A 440 ("replaced") this soon after the session dropped one of its own sockets that was still logging
 * in is that socket's late login, not another client: WhatsApp serves the newest login of a device.
 */
const OWN_SOCKET_REPLACES_MS = 30_000;

/**
 * The connect and reconnect path of a session: sockets opened from stored credentials through the
 * worker's ReconnectPacer and HandshakeGate, their connection events (open, close and why), and the
 * backoff after a close. What a pairing socket shows (QR, code, pair-success) is SessionPairing's.
 */
export abstract class SessionConnection extends SessionEndings {
  /** Stored credentials of a linked device, if any (the truth; the `paired` column follows it). */
  protected async loadStoredAuth(): Promise<boolean> {
    const auth = await PostgresAuthState.load(this.authOptions());
    if (!auth?.creds.me || !auth.creds.account) return false;
    this.auth = auth;
    return true;
  }

  /** A paired session (re)connects from stored auth: `connecting` is said at once, the socket opens when the gate lets it. */
  protected async startReconnect(emitAlways: boolean, reason?: string): Promise<void> {
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

  /**
   * `handshake`: the HandshakeGate ticket this socket holds until it logs in, shows a QR or closes.
   * `rowRead`: the row was read (or written and answered) for this very connect; else it is read again.
   */
  protected async openNewSocket(handshake?: () => void, rowRead = false): Promise<void> {
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

  /** A QR Baileys shows (SessionPairing). */
  protected abstract onQr(qr: string): Promise<void>;

  /** The phone confirmed the link (SessionPairing). */
  protected abstract onPairSuccess(): Promise<void>;

  /** WhatsApp retired the registration material the QR shows (SessionPairing). */
  protected abstract onRegRefresh(): Promise<void>;

  /**
   * First flush of a new pairing's credentials. A database failure is logged and retried on the next
   * `creds.update` (the socket works from memory meanwhile); fencing stops the session.
   */
  protected async persistIfPending(): Promise<void> {
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

  protected scheduleReconnect(): void {
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
  protected reconnectThroughGate(delayMs: number): void {
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
}
