// The simulator: WebSocket listener, connection lifecycle (registration, login, passive/active),
// pairing, delivery to companions and phones, fault execution, and the in-process API.
import { existsSync, readFileSync, writeFileSync } from 'fs';
import { createServer } from 'http';
import type { Server as HttpServer } from 'http';
import type { AddressInfo } from 'net';
import { randomBytes } from 'crypto';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { DEFAULT_WA_WEB_VERSION, jidDecode, proto } from './baileys';
import type { AuthenticationCreds, ChatModification } from './baileys';
import { AccountRegistry, deviceRefKey, digitsOnly } from './accounts';
import type { LinkedDevice } from './accounts';
import type { Account, DeviceDeclaration, DeviceRef, InboxEntry, OutboxEntry, PairingMethod, ReceiptType } from './accounts';
import { APP_STATE_COLLECTIONS, decodeAppState, handleAppStateIq, modificationCollection, phoneChats, phonePatch } from './app-state';
import type { DecodedMutation, Forger, PhoneChat } from './app-state';
import { addressBookOf, type AddressBookEntry } from './app-state';
import { phoneNotes, phoneWriteNote, type PhoneNote } from './notes';
import { ProfileStore, type ProfilePicture } from './profile';
import { createCertificateChain } from './certs';
import type { CertificateChain } from './certs';
import { Connection, nextServerId } from './connection';
import type { ConnectionHandler } from './connection';
import type { ResolvedOptions, SimContext } from './context';
import { SimError } from './errors';
import { compareWaVersions, FaultController, isFaultRule, parseWaVersion } from './faults';
import type { ActiveFault, FaultRequest } from './faults';
import { UndecryptableDeliveries } from './undecryptable';
import { GroupStore } from './groups';
import { IqRouter } from './iq-router';
import type { IqHooks } from './iq-router';
import { createLogger } from './logger';
import type { Logger } from './logger';
import { MessageRouter } from './message-router';
import type { BinaryNode } from './node-io';
import { child, children, iqError, iqResult, node, S_WHATSAPP_NET, unixNow } from './node-io';
import type { ClientFinish } from './noise-server';
import { BusinessStore } from './business';
import { PrivacyTokens, type TokenView } from './privacy-tokens';
import { SendLimits } from './send-limits';
import { CallCenter } from './calls';
import { decryptMedia, encryptMedia, MediaServer } from './media-server';
import { NewsletterStore } from './newsletters';
import { PairingService } from './pairing-service';
import type { ProvisionOptions } from './pairing-service';
import { PhoneAgent } from './phone';
import type { PeerRequestRecord } from './phone';
import { enumName, versionString } from './proto-describe';
import { readStateFile, STATE_VERSION, StatePersister } from './state-store';
import type { SimState } from './state-store';

export interface SimulatorOptions {
  /** WebSocket port (0 = any free port). */
  wsPort?: number;
  /** Control API port (0 = any free port, false = no control API). */
  controlPort?: number | false;
  host?: string;
  /** Makes the certificate chain (and LIDs) reproducible across restarts. */
  rootKeySeed?: string;
  /** File holding the seed; created with a random seed when missing. Ignored if rootKeySeed is set. */
  rootKeyFile?: string;
  logger?: Logger;
  logLevel?: string;
  /** 1:1 messages to other users' devices: 'lid' (default, from=LID + sender_pn) or 'pn'. */
  incomingAddressing?: 'lid' | 'pn';
  autoCreateAccounts?: boolean;
  /** false = load mode: phones send receipts without decrypting. */
  phoneDecrypt?: boolean;
  autoReceipts?: { deliveredMs?: number | null; readMs?: number | null };
  qrRefs?: number;
  initialPrekeyCount?: number;
  /**
   * Directory where the simulator keeps its state (file `wa-sim-state.json`), so a device paired
   * before a restart logs straight back in after it. Loaded at start when present (its root key
   * seed then wins over rootKeySeed/rootKeyFile), saved debounced after changes and on stop.
   * Without it nothing is persisted.
   */
  stateDir?: string;
  /** HTTPS media server for uploads/downloads (default true). */
  media?: boolean;
  mediaPort?: number;
}

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

export interface SendMediaInput {
  to: string;
  type: MediaKind;
  /** File content, base64. */
  data: string;
  mimetype?: string;
  caption?: string;
  fileName?: string;
  ptt?: boolean;
  seconds?: number;
}

export interface AccountInfo {
  phone: string;
  jid: string;
  lid: string;
  name: string;
  business: boolean;
}

export interface DeviceInfo {
  jid: string;
  lid: string;
  phone: string;
  deviceId: number;
  keyIndex: number;
  status: 'active' | 'logged-out';
  connected: boolean;
  pairingMethod: PairingMethod;
  pairedAt: string;
  /** DeviceProps.os, i.e. Baileys' browser[0] (the "system name" shown under linked devices). */
  os?: string;
  systemName?: string;
  /** DeviceProps.platformType, lowercased (chrome, firefox, safari, edge, desktop…). */
  browser?: string;
  platformType?: string;
  requireFullSync?: boolean;
  historySyncConfig?: Record<string, unknown>;
  fullSyncDaysLimit?: number;
  recentSyncDaysLimit?: number;
  pushName?: string;
  registration: DeviceDeclaration;
  lastLogin?: DeviceDeclarationLogin;
  loginCount: number;
  /** Privacy-token issuances the device sent (a client issues once a week per contact). */
  privacyTokenIssues: number;
}

type DeviceDeclarationLogin = NonNullable<LinkedDevice['lastLogin']>;

export interface InboxQuery {
  since?: number;
  includeOwn?: boolean;
}

export interface SendOptions {
  id?: string;
}

const PENDING_LIMIT = 5_000;
// Baileys uploads more when the notified count is below MIN_PREKEY_COUNT (5).
const PREKEY_LOW_THRESHOLD = 4;

export class WaSimulator implements ConnectionHandler, SimContext, IqHooks {
  readonly registry: AccountRegistry;
  readonly logger: Logger;
  readonly faults = new FaultController();
  private readonly undecryptable = new UndecryptableDeliveries();
  /** The accounts' own push names and profile pictures. */
  readonly profiles = new ProfileStore(this);
  readonly router: MessageRouter;
  readonly groups: GroupStore;
  readonly options: ResolvedOptions;
  readonly certs: CertificateChain;
  private readonly iqRouter: IqRouter;
  private readonly phones = new Map<string, PhoneAgent>();
  private readonly connections = new Set<Connection>();
  readonly pairing = new PairingService({ qrRefs: () => this.options.qrRefs });
  private httpServer?: HttpServer;
  readonly media?: MediaServer;
  readonly calls: CallCenter;
  readonly newsletters: NewsletterStore;
  readonly business: BusinessStore;
  /** The reach-out timelock and the new-chat cap (faults `reachout-timelock`, `new-chat-cap`). */
  readonly sendLimits: SendLimits;
  readonly privacyTokens: PrivacyTokens;
  private wss?: WebSocketServer;
  private wsPort = 0;
  private host = '127.0.0.1';
  private stopped = false;
  private restarting?: Promise<void>;
  private handshakePeak = 0;
  private readonly persister?: StatePersister;
  private readonly rootKeySeed?: string;
  private readonly lidSalt: string;

  constructor(private readonly input: SimulatorOptions = {}) {
    this.logger = input.logger ?? createLogger(input.logLevel);
    const stored = input.stateDir ? readStateFile(input.stateDir) : undefined;
    const configuredSeed = input.rootKeySeed ?? (input.rootKeyFile ? readOrCreateSeed(input.rootKeyFile) : undefined);
    if (stored && configuredSeed !== undefined && configuredSeed !== stored.rootKeySeed) {
      this.logger.warn({ stateDir: input.stateDir }, 'the saved state has its own root key seed; the configured one is ignored');
    }
    // With a stateDir the seed must be known to be saved; without one nothing changes.
    const seed = stored?.rootKeySeed ?? configuredSeed ?? (input.stateDir ? randomBytes(32).toString('hex') : undefined);
    this.rootKeySeed = seed;
    this.certs = createCertificateChain(seed);
    if (stored && stored.rootPublicKey !== this.rootPublicKey) {
      throw new Error(`the saved state in ${input.stateDir} does not match its root key seed`);
    }
    this.lidSalt = stored?.lidSalt ?? configuredSeed ?? randomBytes(8).toString('hex');
    this.registry = new AccountRegistry(this.lidSalt, this.logger);
    this.options = {
      incomingAddressing: input.incomingAddressing ?? 'lid',
      autoCreateAccounts: input.autoCreateAccounts ?? false,
      phoneDecrypt: input.phoneDecrypt ?? true,
      autoReceipts: {
        deliveredMs: input.autoReceipts?.deliveredMs === undefined ? 150 : input.autoReceipts.deliveredMs,
        readMs: input.autoReceipts?.readMs ?? null,
      },
      qrRefs: input.qrRefs ?? 6,
      initialPrekeyCount: input.initialPrekeyCount ?? 0,
    };
    if (input.media !== false) this.media = new MediaServer();
    this.router = new MessageRouter(this);
    this.groups = new GroupStore(this);
    this.calls = new CallCenter(this);
    this.newsletters = new NewsletterStore(this);
    this.business = new BusinessStore(this);
    this.privacyTokens = new PrivacyTokens(this);
    this.sendLimits = new SendLimits(this, this.business);
    this.iqRouter = new IqRouter(this, this);
    if (input.stateDir) {
      if (stored) this.restoreState(stored);
      this.persister = new StatePersister(input.stateDir, () => this.snapshotState(), this.logger);
      // Written at once, so the root key a gateway is told to trust is on disk from the first start.
      this.persister.markDirty();
      this.persister.flush();
    }
  }

  // ------------------------------------------------------------------ persistence (stateDir)

  /** Something worth persisting changed: save it soon (no-op without a stateDir). */
  stateChanged(): void {
    this.persister?.markDirty();
  }

  /** Everything a paired session depends on, as the state file keeps it. */
  snapshotState(): SimState {
    return {
      version: STATE_VERSION,
      savedAt: new Date().toISOString(),
      rootKeySeed: this.rootKeySeed ?? '',
      rootPublicKey: this.rootPublicKey,
      lidSalt: this.lidSalt,
      accounts: this.registry.all().map((account) => account.toState()),
      phones: [...this.phones.entries()].filter(([, phone]) => !phone.isBlank).map(([number, phone]) => [number, phone.toState()]),
      groups: this.groups.toState(),
      newsletters: this.newsletters.toState(),
      business: this.business.toState(),
      profiles: this.profiles.toState(),
      messages: this.router.toState(),
    };
  }

  private restoreState(state: SimState): void {
    for (const account of state.accounts) this.registry.restore(account);
    for (const [number, phone] of state.phones ?? []) {
      const account = this.registry.get(number);
      if (account) this.phoneOf(account).restore(phone);
    }
    this.groups.restore(state.groups ?? []);
    this.newsletters.restore(state.newsletters ?? []);
    this.business.restore(state.business);
    this.profiles.restore(state.profiles);
    this.router.restore(state.messages ?? []);
    this.logger.info({ stateDir: this.input.stateDir, accounts: state.accounts.length, savedAt: state.savedAt }, 'simulator state loaded');
  }

  // ------------------------------------------------------------------ lifecycle

  async listen(): Promise<void> {
    this.host = this.input.host ?? '127.0.0.1';
    this.httpServer = createServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain' });
      res.end('websocket only');
    });
    // Listening first: a WebSocketServer re-emits its server's `error`, so a busy port became an
    // unhandled 'error' event that killed the process instead of a rejection the caller can name.
    await listenOn(this.httpServer, this.input.wsPort ?? 0, this.host);
    this.wss = new WebSocketServer({ server: this.httpServer, maxPayload: 64 * 1024 * 1024 });
    this.wss.on('connection', (socket: WebSocket) => this.accept(socket));
    this.wsPort = (this.httpServer.address() as AddressInfo).port;
    if (this.media) {
      await this.media.listen(this.input.mediaPort ?? 0, this.host);
      this.options.mediaHost = this.media.hostname;
    }
  }

  get websocketUrl(): string {
    return `ws://${this.host}:${this.wsPort}/ws/chat`;
  }

  get rootPublicKey(): string {
    return Buffer.from(this.certs.root.public).toString('base64');
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const connection of this.connections) connection.destroy();
    this.connections.clear();
    for (const phone of this.phones.values()) phone.stop();
    this.groups.stop();
    this.calls.stop();
    await new Promise<void>((resolve) => (this.wss ? this.wss.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (this.httpServer ? this.httpServer.close(() => resolve()) : resolve()));
    this.httpServer?.closeAllConnections?.();
    await this.media?.close();
    if (this.persister) {
      // Let the phones finish what they were decrypting/sending, so their Signal state is saved whole.
      await Promise.race([this.settle(), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      // Before registry.close(), which empties the phones' key stores.
      this.persister.close();
    }
    this.registry.close();
  }

  /**
   * Closes every socket (a server restart); accounts and linked devices survive, so clients
   * reconnect with their stored auth. With downMs the port refuses connections for that long.
   */
  async restart(downMs = 0): Promise<void> {
    if (this.restarting) return this.restarting;
    this.restarting = (async () => {
      for (const connection of [...this.connections]) connection.close();
      if (downMs > 0 && this.httpServer) {
        const server = this.httpServer;
        for (const client of this.wss?.clients ?? []) client.terminate();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections?.();
        await new Promise((resolve) => setTimeout(resolve, downMs));
        if (!this.stopped) await listenOn(server, this.wsPort, this.host);
      }
    })().finally(() => {
      this.restarting = undefined;
    });
    return this.restarting;
  }

  private accept(socket: WebSocket): void {
    if (this.stopped) {
      socket.terminate();
      return;
    }
    const connection = new Connection(socket, this.certs, this, this.logger);
    this.connections.add(connection);
    this.handshakePeak = Math.max(this.handshakePeak, this.handshakes().inProgress);
  }

  /**
   * Connections not logged in yet (handshake, login, or a pairing waiting for its scan), and the most
   * there were at once since the last reset: what a client's reconnect storm puts on the server.
   */
  handshakes(options: { resetPeak?: boolean } = {}): { inProgress: number; peak: number } {
    let inProgress = 0;
    for (const connection of this.connections) if (!connection.deviceJid && connection.isOpen) inProgress++;
    const result = { inProgress, peak: Math.max(this.handshakePeak, inProgress) };
    if (options.resetPeak) this.handshakePeak = inProgress;
    return result;
  }

  // ------------------------------------------------------------------ SimContext

  phoneOf(account: Account): PhoneAgent {
    let phone = this.phones.get(account.phone);
    if (!phone) {
      phone = new PhoneAgent(this, account);
      this.phones.set(account.phone, phone);
    }
    return phone;
  }

  matchesDevice(filter: string, ref: DeviceRef): boolean {
    if (!filter.includes('@')) return digitsOnly(filter) === ref.account.phone;
    const decoded = jidDecode(filter);
    if (!decoded) return false;
    const account = this.registry.resolveUser(filter);
    if (account !== ref.account) return false;
    return decoded.device === undefined || decoded.device === ref.deviceId;
  }

  deliver(target: DeviceRef, stanza: BinaryNode, sender?: DeviceRef): void {
    if (this.faults.take('drop-deliveries', (f) => this.matchesDevice(f, target))) {
      this.logger.debug({ target: deviceRefKey(target), id: stanza.attrs.id }, 'fault: delivery dropped');
      return;
    }
    if (stanza.tag === 'message' && this.faults.take('corrupt', (f) => this.matchesDevice(f, target))) {
      stanza = corruptEnc(stanza);
    }
    stanza = this.undecryptable.apply(target, stanza, () => this.faults.take('undecryptable', (f) => this.matchesDevice(f, target)));
    if (target.deviceId === 0) {
      this.phoneOf(target.account).onStanza(stanza, sender);
      return;
    }
    const device = target.account.devices.get(target.deviceId);
    if (device) this.deliverToCompanion(device, stanza);
  }

  /** Like WhatsApp's PreKeyLow: when a device runs short of one-time prekeys, ask it to upload more. */
  private onPreKeyConsumed(device: LinkedDevice): void {
    if (device.keys.preKeys.size !== PREKEY_LOW_THRESHOLD) return;
    const connection = device.connection;
    if (!connection?.isTransportReady || !connection.active) return;
    connection.sendNode(
      node('notification', { from: S_WHATSAPP_NET, type: 'encrypt', id: nextServerId(), t: String(unixNow()) }, [
        node('count', { value: String(device.keys.preKeys.size) }),
      ]),
    );
  }

  deliverToCompanion(device: LinkedDevice, stanza: BinaryNode): void {
    if (device.status !== 'active') return;
    const key = `${stanza.tag}:${stanza.attrs.id}:${stanza.attrs.type ?? ''}`;
    device.pending.delete(key);
    device.pending.set(key, stanza);
    if (device.pending.size > PENDING_LIMIT) {
      const oldest = device.pending.keys().next().value;
      if (oldest !== undefined) device.pending.delete(oldest);
    }
    const connection = device.connection;
    if (connection?.isTransportReady && connection.active) connection.sendNode(stanza);
  }

  // ------------------------------------------------------------------ ConnectionHandler

  async onClientFinish(connection: Connection, finish: ClientFinish): Promise<void> {
    const payload = finish.payload;
    if (this.isOutdated(payload)) {
      connection.sendNode(node('failure', { reason: '405', location: 'sim' }));
      connection.close();
      return;
    }
    if (payload.devicePairingData) {
      this.pairing.startRegistration(connection, finish);
      return;
    }
    if (payload.username !== null && payload.username !== undefined) {
      this.login(connection, finish);
      return;
    }
    connection.sendNode(node('failure', { reason: '400', location: 'sim' }));
    connection.close();
  }

  async onNode(connection: Connection, stanza: BinaryNode): Promise<void> {
    try {
      await this.handleNode(connection, stanza);
    } finally {
      // Prekey uploads and fetches, app state, groups, privacy… most stanzas change something.
      this.stateChanged();
    }
  }

  private async handleNode(connection: Connection, stanza: BinaryNode): Promise<void> {
    const device = connection.deviceJid ? this.registry.findDevice(connection.deviceJid) : undefined;
    const ref: DeviceRef | undefined = device ? { account: device.account, deviceId: device.deviceId } : undefined;
    switch (stanza.tag) {
      case 'iq':
        if (stanza.attrs.type === 'get' || stanza.attrs.type === 'set') {
          await this.iqRouter.handle(connection, stanza, device);
        }
        return;
      case 'message': {
        if (!ref || !device) return;
        const ackRule = this.faults.take('ack', (f) => this.matchesDevice(f, ref));
        if (ackRule?.mode === 'lost') {
          connection.destroy();
          return;
        }
        const refusal = ackRule?.mode === 'error' ? (ackRule.error ?? '463') : this.sendLimits.refusal(ref, stanza);
        if (refusal) {
          connection.sendNode(node('ack', { class: 'message', id: stanza.attrs.id, from: stanza.attrs.to, t: String(unixNow()), error: refusal }));
          return;
        }
        const ack = this.router.onMessage(ref, stanza);
        if (ack && !ack.attrs.error) this.privacyTokens.note(ref.account, stanza);
        if (!ack || ackRule?.mode === 'drop') return;
        if (ackRule?.mode === 'delay') {
          setTimeout(() => connection.sendNode(ack), ackRule.delayMs ?? 5_000);
        } else {
          connection.sendNode(ack);
        }
        return;
      }
      case 'receipt':
        if (!ref) return;
        this.router.onReceipt(ref, stanza);
        connection.sendNode(node('ack', { class: 'receipt', id: stanza.attrs.id, from: stanza.attrs.to, type: stanza.attrs.type }));
        return;
      case 'ack':
        if (ref) this.router.onAck(ref, stanza);
        return;
      case 'presence':
      case 'chatstate':
        if (ref) this.groups.onPresence(ref, stanza);
        return;
      case 'call':
        if (!ref) return;
        this.calls.onDeviceCall(ref, stanza);
        connection.sendNode(node('ack', { class: 'call', id: stanza.attrs.id, from: stanza.attrs.to }));
        return;
      default:
        // ib (unified_session, offline_batch) and anything else needs no answer.
        return;
    }
  }

  onClose(connection: Connection): void {
    this.connections.delete(connection);
    this.pairing.onClose(connection);
    if (connection.deviceJid) {
      const device = this.registry.findDevice(connection.deviceJid);
      if (device?.connection === connection) device.connection = undefined;
    }
  }

  // ------------------------------------------------------------------ registration & login

  private login(connection: Connection, finish: ClientFinish): void {
    const payload = finish.payload;
    const phone = String(payload.username);
    const deviceId = payload.device ?? 0;
    const account = this.registry.get(phone);
    const device = account?.devices.get(deviceId);
    const ref: DeviceRef | undefined = account ? { account, deviceId } : undefined;
    const rejection = ref ? this.faults.take('reject-login', (f) => this.matchesDevice(f, ref)) : undefined;
    const fail = (reason: number): void => {
      connection.sendNode(node('failure', { reason: String(reason), location: 'sim' }));
      connection.close();
    };
    if (rejection) return fail(rejection.reason ?? 401);
    if (!account || !device || device.status !== 'active' || !device.noiseKey.equals(finish.clientStatic)) {
      return fail(401);
    }
    const previous = device.connection;
    if (previous && previous !== connection && previous.isOpen) {
      // A second login of the same device replaces the first, as on WhatsApp.
      previous.sendNode(node('stream:error', {}, [node('conflict', { type: 'replaced' })]));
      previous.close();
    }
    device.connection = connection;
    device.onPreKeyConsumed = (d) => this.onPreKeyConsumed(d);
    device.loginCount++;
    device.lastLogin = {
      at: Date.now(),
      pushName: payload.pushName ?? undefined,
      passive: payload.passive ?? undefined,
      pull: payload.pull ?? undefined,
      userAgentPlatform: enumName(proto.ClientPayload.UserAgent.Platform, payload.userAgent?.platform),
      appVersion: versionString(payload.userAgent?.appVersion),
      webSubPlatform: enumName(proto.ClientPayload.WebInfo.WebSubPlatform, payload.webInfo?.webSubPlatform),
      connectType: enumName(proto.ClientPayload.ConnectType, payload.connectType),
      connectReason: enumName(proto.ClientPayload.ConnectReason, payload.connectReason),
      lidDbMigrated: payload.lidDbMigrated ?? undefined,
    };
    connection.deviceJid = device.jid;
    connection.active = false;
    const latency = this.faults.peek('latency', (f) => this.matchesDevice(f, { account, deviceId }));
    connection.outboundDelayMs = latency?.delayMs ?? 0;
    connection.ignorePings = !!this.faults.peek('ignore-pings', (f) => this.matchesDevice(f, { account, deviceId }));
    const now = unixNow();
    connection.sendNode(
      node('success', {
        t: String(now),
        lid: device.lidJid,
        props: '1',
        creation: String(Math.floor(device.pairedAt / 1000)),
        location: 'sim',
        display_name: '',
      }),
    );
    this.stateChanged();
  }

  /** `<passive><active/>`: the client is ready; flush what queued up while it was away. */
  activate(connection: Connection, device: LinkedDevice): void {
    if (connection.active) return;
    connection.active = true;
    const offline = [...device.pending.values()];
    for (const stanza of offline) {
      connection.sendNode({ ...stanza, attrs: { ...stanza.attrs, offline: '1' } });
    }
    connection.sendNode(node('ib', { from: S_WHATSAPP_NET }, [node('offline', { count: String(offline.length) })]));
    if (!device.historySent) {
      device.historySent = true;
      this.stateChanged();
      void this.phoneOf(device.account)
        .pushInitialSync(device)
        .catch((err: unknown) => {
          this.logger.warn({ err: (err as Error).message }, 'initial sync push failed');
        });
    }
  }

  logoutDevice(device: LinkedDevice, reason: string, via: 'stream-error' | 'failure' = 'stream-error'): void {
    device.status = 'logged-out';
    device.pending.clear();
    this.stateChanged();
    const connection = device.connection;
    device.connection = undefined;
    this.logger.debug({ device: device.jid, reason }, 'device logged out');
    if (connection?.isOpen) {
      if (reason !== 'user_initiated') {
        connection.sendNode(
          via === 'failure'
            ? node('failure', { reason: '401', location: 'sim' })
            : node('stream:error', { code: '401' }, [node('conflict', { type: 'device_removed' })]),
        );
      }
      connection.close();
    }
  }

  // ------------------------------------------------------------------ pairing

  onLinkCodeHello(connection: Connection, iq: BinaryNode): BinaryNode {
    const account = this.registry.get(digitsOnly(jidDecode(child(iq, 'link_code_companion_reg')?.attrs.jid ?? '')?.user ?? ''));
    const refusal = this.faults.take('pair-code-refused', (f) => !!account && this.matchesDevice(f, { account, deviceId: 0 }));
    if (refusal) return iqError(iq, refusal.code ?? 429, refusal.text ?? (refusal.code === 400 ? 'bad-request' : 'rate-overlimit'));
    return this.pairing.onLinkCodeHello(connection, iq);
  }

  onLinkCodeFinish(connection: Connection, iq: BinaryNode): BinaryNode | undefined {
    return this.pairing.onLinkCodeFinish(connection, iq);
  }

  /** The account's phone scans a companion's QR (raw string or PNG data URI). */
  async scanQr(phone: string, qr: string): Promise<DeviceInfo> {
    const account = this.accountForLinking(phone);
    const refresh = this.faults.take('reg-refresh', (f) => this.matchesDevice(f, { account, deviceId: 0 }));
    const device = await this.pairing.scanQr(account, qr, { refresh: Boolean(refresh) });
    this.stateChanged();
    return this.describeDevice(device);
  }

  /** The account's phone enters the 8-character code a companion displayed. */
  async enterPairingCode(phone: string, code: string): Promise<DeviceInfo> {
    const device = await this.pairing.enterPairingCode(this.accountForLinking(phone), code);
    this.stateChanged();
    return this.describeDevice(device);
  }

  /** The phone that links a companion exists by definition: create its account on first use. */
  private accountForLinking(phone: string): Account {
    if (typeof phone !== 'string' && typeof phone !== 'number') throw new SimError(400, 'phone is required');
    const existing = this.registry.resolveUser(String(phone));
    if (existing) return existing;
    this.createAccount({ phone: String(phone) });
    return this.requireAccount(digitsOnly(String(phone)));
  }

  /**
   * Links a companion without the QR dance: fills `creds` (from Baileys' initAuthCreds) as a
   * successful pairing would, so the next connect logs straight in.
   */
  provisionDevice(phone: string, creds?: AuthenticationCreds, options: ProvisionOptions = {}): { device: DeviceInfo; creds: AuthenticationCreds } {
    const result = this.pairing.provision(this.requireAccount(phone), creds, options);
    this.stateChanged();
    return { device: this.describeDevice(result.device), creds: result.creds };
  }

  // ------------------------------------------------------------------ app state, media, groups hooks

  async handleAppState(device: LinkedDevice, iq: BinaryNode): Promise<BinaryNode> {
    const matches = (f: string) => this.matchesDevice(f, { account: device.account, deviceId: device.deviceId });
    const uploads = children(child(iq, 'sync'), 'collection')
      .filter((collection) => children(collection, 'patch').length > 0)
      .map((collection) => collection.attrs.name);
    const refusal = uploads.length ? this.faults.take('app-state', matches) : undefined;
    if (refusal) return iqError(iq, refusal.code ?? 400, 'fault: app-state patch refused');
    // The phone's change lands while this upload is in flight: the upload's base is stale (a 409).
    const race = uploads.length
      ? this.faults.take('app-state-conflict', matches, (rule) => uploads.includes(modificationCollection(rule.jid, rule.mod as ChatModification) ?? ''))
      : undefined;
    if (race) {
      this.announceAppState(device.account, [await phonePatch(device.account, race.jid, race.mod as ChatModification)]);
      this.stateChanged();
    }
    const external = this.media ? this.faults.peek('app-state-external', matches) : undefined;
    const serving = external && this.media ? { media: this.media, snapshot: external.snapshot, externalAbove: external.externalAbove } : undefined;
    // A forged answer (the `app-state-bad-mac` fault): the next content served of the collection does not match its MAC.
    const forge: Forger = (name) => {
      const rule = this.faults.take('app-state-bad-mac', matches, (candidate) => !candidate.collection || candidate.collection === name);
      return rule ? { value: rule.value } : undefined;
    };
    const { reply, changed } = await handleAppStateIq(device.account, iq, serving, forge);
    if (changed.length) this.announceAppState(device.account, changed, device);
    if (changed.some((collection) => collection.name === 'critical_block'))
      void this.profiles.applyPushName(device.account).catch((error: unknown) => this.logger.warn({ err: error }, 'push name not applied'));
    return reply;
  }

  /** `w:profile:picture` of a user (a group's is the group store's). */
  handlePicture(device: LinkedDevice, iq: BinaryNode): BinaryNode {
    return this.profiles.handlePictureIq(device, iq);
  }

  /** `server_sync` tells the other devices to pull the collections that changed. */
  private announceAppState(account: Account, changed: Array<{ name: string; version: number }>, except?: LinkedDevice): void {
    for (const other of account.activeDevices()) {
      if (other === except) continue;
      this.deliverToCompanion(
        other,
        node(
          'notification',
          { from: S_WHATSAPP_NET, id: nextServerId(), type: 'server_sync', t: String(unixNow()) },
          changed.map(({ name, version }) => node('collection', { name, version: String(version) })),
        ),
      );
    }
  }

  handleGroupIq(device: LinkedDevice, iq: BinaryNode): Promise<BinaryNode> {
    return this.groups.handleIq({ account: device.account, deviceId: device.deviceId }, iq);
  }

  handleMex(device: LinkedDevice, iq: BinaryNode): BinaryNode {
    const sender = { account: device.account, deviceId: device.deviceId };
    if (this.business.isLimitsQuery(iq)) {
      const failure = this.faults.take('limits-query-error', (f) => this.matchesDevice(f, sender));
      if (failure) return iqError(iq, failure.code ?? 500, failure.code === 500 || !failure.code ? 'internal-server-error' : 'error');
    }
    const limits = this.business.handleMex(sender, iq);
    if (limits) return limits;
    return this.newsletters.handleMex({ account: device.account, deviceId: device.deviceId }, iq);
  }

  handleNewsletterIq(device: LinkedDevice, iq: BinaryNode): BinaryNode {
    return this.newsletters.handleIq({ account: device.account, deviceId: device.deviceId }, iq);
  }

  handleBusinessIq(device: LinkedDevice, iq: BinaryNode): BinaryNode {
    const sender = { account: device.account, deviceId: device.deviceId };
    return iq.attrs.xmlns === 'w:biz:catalog' ? this.business.handleCatalogIq(sender, iq) : this.business.handleBizIq(sender, iq);
  }

  handleMediaConn(iq: BinaryNode): BinaryNode {
    if (!this.options.mediaHost) return iqError(iq, 501, 'feature-not-implemented');
    return iqResult(iq, [
      node('media_conn', { auth: randomBytes(16).toString('base64url'), ttl: '3600', auth_ttl: '21600', max_buckets: '12' }, [
        node('host', { hostname: this.options.mediaHost, maxContentLengthBytes: String(100 * 1024 * 1024) }),
      ]),
    ]);
  }

  // ------------------------------------------------------------------ public API

  createAccount(input: { phone: string; name?: string; business?: boolean }): AccountInfo {
    const phone = digitsOnly(String(input?.phone ?? ''));
    if (phone.length < 8 || phone.length > 15) throw new SimError(400, 'phone must have 8 to 15 digits');
    const account = this.registry.create(phone, input.name, !!input.business);
    if (input.business !== undefined) account.business = !!input.business;
    account.autoReceipts = { ...this.options.autoReceipts };
    this.stateChanged();
    return describeAccount(account);
  }

  getAccount(phone: string): AccountInfo {
    return describeAccount(this.requireAccount(phone));
  }

  listAccounts(): AccountInfo[] {
    return this.registry.all().map(describeAccount);
  }

  /** Messages (WebMessageInfo JSON) the phone keeps for on-demand history and placeholder resends. */
  archiveMessages(phone: string, messages: unknown): number {
    if (!Array.isArray(messages) || messages.some((entry) => !entry || typeof entry !== 'object'))
      throw new SimError(400, 'messages must be an array of WebMessageInfo objects');
    const archived = this.phoneOf(this.requireAccount(phone)).archiveMessages(messages as Array<Record<string, unknown>>);
    this.stateChanged();
    return archived;
  }

  /** Peer data operation requests (history on demand, placeholder resends) the phone received. */
  peerRequests(phone: string): PeerRequestRecord[] {
    return this.phoneOf(this.requireAccount(phone)).peerRequests();
  }

  /** Sets the history the phone pushes to companions paired from now on (HistorySync JSON objects). */
  setHistory(phone: string, history: Array<Record<string, unknown>> | undefined): void {
    const account = this.requireAccount(phone);
    if (history !== undefined && !Array.isArray(history)) throw new SimError(400, 'history must be an array of HistorySync objects');
    for (const chunk of history ?? []) {
      try {
        proto.HistorySync.encode(proto.HistorySync.fromObject(chunk)).finish();
      } catch (err) {
        throw new SimError(400, `invalid HistorySync: ${(err as Error).message}`);
      }
    }
    account.history = history;
    this.stateChanged();
  }

  /** Sets who sees the account's status updates (what `<iq xmlns="status"><privacy/>` answers). */
  setStatusPrivacy(phone: string, type: string, list: string[]): { type: string; list: string[] } {
    if (type !== 'contacts' && type !== 'blacklist' && type !== 'whitelist') throw new SimError(400, 'type must be contacts|blacklist|whitelist');
    if (!Array.isArray(list) || list.some((jid) => typeof jid !== 'string' || !jid.includes('@'))) throw new SimError(400, 'list must be an array of JIDs');
    const account = this.requireAccount(phone);
    account.statusPrivacy = { type, list: [...list] };
    this.stateChanged();
    return account.statusPrivacy;
  }

  setAutoReceipts(phone: string, settings: { deliveredMs?: number | null; readMs?: number | null }): void {
    const account = this.requireAccount(phone);
    account.autoReceipts = {
      deliveredMs: settings.deliveredMs === undefined ? account.autoReceipts.deliveredMs : settings.deliveredMs,
      readMs: settings.readMs === undefined ? account.autoReceipts.readMs : settings.readMs,
    };
    this.stateChanged();
  }

  /** A message from the account's phone. `message` is any WAProto Message (JSON or instance). */
  async sendMessage(
    phone: string,
    to: string,
    content: { text?: string; message?: Record<string, unknown> | proto.IMessage },
    options: SendOptions = {},
  ): Promise<{ id: string }> {
    const account = this.requireAccount(phone);
    if (typeof to !== 'string' || !to) throw new SimError(400, 'to is required');
    let message: proto.IMessage;
    if (content.message !== undefined) {
      if (!content.message || typeof content.message !== 'object') throw new SimError(400, 'message must be an object');
      try {
        message = proto.Message.fromObject(content.message);
        proto.Message.encode(message).finish();
      } catch (err) {
        throw new SimError(400, `invalid message: ${(err as Error).message}`);
      }
    } else if (typeof content.text === 'string') {
      message = { conversation: content.text };
    } else {
      throw new SimError(400, 'text or message is required');
    }
    const target = to.includes('@') ? to : `${digitsOnly(to)}@s.whatsapp.net`;
    if (!target.endsWith('@g.us') && !this.registry.resolveUser(target)) {
      if (this.options.autoCreateAccounts && target.endsWith('@s.whatsapp.net')) this.registry.create(digitsOnly(to));
      else throw new SimError(404, `no account for ${to}`);
    }
    const id = await this.phoneOf(account).sendMessage(target, message, { id: options.id });
    return { id };
  }

  // ------------------------------------------------------------------ blocklist

  /** Blocked contacts of the account, as the blocklist query answers them (LID JIDs). */
  blocklist(phone: string): string[] {
    return [...this.requireAccount(phone).blocklist];
  }

  /** The phone blocks or unblocks a contact (phone, PN or LID JID); linked devices are told. */
  setBlocked(phone: string, contact: string, block: boolean): { blocklist: string[] } {
    const account = this.requireAccount(phone);
    const target = typeof contact === 'string' && contact ? this.registry.resolveUser(contact.includes('@') ? contact : digitsOnly(contact)) : undefined;
    if (!target) throw new SimError(404, `no account ${contact}`);
    if (block) account.blocklist.add(target.lidJid);
    else account.blocklist.delete(target.lidJid);
    this.blocklistChanged(account, [{ jid: target.lidJid, action: block ? 'block' : 'unblock' }]);
    this.stateChanged();
    return { blocklist: [...account.blocklist] };
  }

  /**
   * `<notification type=account_sync><blocklist>` to the account's devices but the one that made the
   * change; like any delivery it can be lost with the `drop-deliveries` fault.
   */
  blocklistChanged(account: Account, items: Array<{ jid: string; action: 'block' | 'unblock' }>, except?: LinkedDevice): void {
    for (const other of account.activeDevices()) {
      if (other === except || other.deviceId === 0) continue;
      this.deliver(
        { account, deviceId: other.deviceId },
        node('notification', { from: S_WHATSAPP_NET, id: nextServerId(), type: 'account_sync', t: String(unixNow()) }, [
          node(
            'blocklist',
            {},
            items.map((item) => node('item', { jid: item.jid, action: item.action })),
          ),
        ]),
      );
    }
  }

  /**
   * The phone changes app state (label, pin, archive… as Baileys' ChatModification) for a chat. `collection`
   * puts the mutation in another collection than Baileys' (as an older client did: WA Web 2023 kept quick
   * replies in regular_low).
   */
  async appStateModify(phone: string, jid: string, mod: ChatModification, collection?: string): Promise<{ name: string; version: number }> {
    const account = this.requireAccount(phone);
    if (typeof jid !== 'string' || !mod || typeof mod !== 'object') throw new SimError(400, 'jid and mod are required');
    if (collection !== undefined && !APP_STATE_COLLECTIONS.includes(collection))
      throw new SimError(400, `collection must be ${APP_STATE_COLLECTIONS.join('|')}`);
    let result: { name: string; version: number };
    try {
      result = await phonePatch(account, jid, mod, collection);
    } catch (err) {
      throw new SimError(400, `invalid chat modification: ${(err as Error).message}`);
    }
    this.announceAppState(account, [result]);
    this.stateChanged();
    return result;
  }

  /** Every app-state mutation stored for the account, decrypted with the account key. */
  appState(phone: string): Promise<Record<string, { version: number; mutations: DecodedMutation[] }>> {
    return decodeAppState(this.requireAccount(phone));
  }

  /** The phone's chat list as its app state leaves it: pinned, archived, muted, read, cleared, deleted per chat. */
  /** The phone's address book, as the app-state contact mutations (the phone's and its devices') left it. */
  /** The account's profile picture as its device set it (the JPEG), if it has one. */
  profilePicture(phone: string): ProfilePicture | undefined {
    return this.profiles.picture(this.requireAccount(phone));
  }

  /** The phone sets (a JPEG) or removes (null) the account's picture. */
  setProfilePicture(phone: string, jpeg: Buffer | null): ProfilePicture | undefined {
    return this.profiles.setPicture(this.requireAccount(phone), jpeg);
  }

  /** The phone's chat notes (WhatsApp Business), as the app-state `note_edit` mutations of the phone and its devices left them. */
  notes(phone: string): Promise<PhoneNote[]> {
    return phoneNotes(this.requireAccount(phone));
  }

  /** The phone writes a chat's note ('' deletes it); its linked devices are told to sync. */
  async writeNote(phone: string, chatJid: string, text: string): Promise<PhoneNote> {
    const account = this.requireAccount(phone);
    if (!chatJid.includes('@')) throw new SimError(400, 'chatJid must be a JID');
    const { note, ...changed } = await phoneWriteNote(account, chatJid, text);
    this.announceAppState(account, [changed]);
    this.stateChanged();
    return note;
  }

  addressBook(phone: string): Promise<AddressBookEntry[]> {
    return addressBookOf(this.requireAccount(phone));
  }

  chats(phone: string): Promise<PhoneChat[]> {
    return phoneChats(this.requireAccount(phone));
  }

  inbox(phone: string, query: InboxQuery = {}): InboxEntry[] {
    const account = this.requireAccount(phone);
    const since = query.since ?? 0;
    return account.inbox.filter((e) => e.seq > since && (query.includeOwn || !e.fromMe));
  }

  /** The trusted-contact tokens the account issued and was issued, and what its 1:1 messages carried. */
  privacyTokensOf(phone: string): TokenView {
    return this.privacyTokens.view(this.requireAccount(phone));
  }

  outbox(phone: string): OutboxEntry[] {
    return [...this.requireAccount(phone).outbox.values()];
  }

  sendReceipts(phone: string, chat: string, ids: string[], type: ReceiptType): { sent: number } {
    const account = this.requireAccount(phone);
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) throw new SimError(400, 'ids must be an array of strings');
    if (type !== 'delivered' && type !== 'read' && type !== 'played') throw new SimError(400, 'type must be delivered|read|played');
    if (typeof chat !== 'string' || !chat) throw new SimError(400, 'chat is required');
    const chatJid = chat.includes('@') ? chat : `${digitsOnly(chat)}@s.whatsapp.net`;
    return { sent: this.phoneOf(account).sendReceipts(chatJid, ids, type) };
  }

  getDevice(jid: string): DeviceInfo {
    const device = this.registry.findDevice(jid);
    if (!device) throw new SimError(404, `no linked device ${jid}`);
    return this.describeDevice(device);
  }

  listDevices(phone: string): DeviceInfo[] {
    return [...this.requireAccount(phone).devices.values()].map((d) => this.describeDevice(d));
  }

  dropDevice(jid: string): void {
    const device = this.requireDevice(jid);
    device.connection?.destroy();
  }

  /** Logs a linked device out from the server side (like removing it on the phone). */
  logout(jid: string, via: 'stream-error' | 'failure' = 'stream-error'): void {
    this.logoutDevice(this.requireDevice(jid), 'server_initiated', via);
  }

  /** Waits until every phone has processed what was routed to it so far. */
  async settle(): Promise<void> {
    await Promise.all([...this.phones.values()].map((p) => p.idle()));
  }

  async injectFault(request: FaultRequest): Promise<{ id?: number; done: boolean }> {
    if (isFaultRule(request)) {
      const fault = this.faults.add(request);
      if (request.kind === 'latency' || request.kind === 'ignore-pings') this.applyStandingFaults();
      return { id: fault.id, done: false };
    }
    switch (request.kind) {
      case 'clear':
        this.faults.clear();
        this.sendLimits.clear();
        this.applyStandingFaults();
        return { done: true };
      case 'drop':
        this.dropDevice(request.device);
        return { done: true };
      case 'conflict': {
        const connection = this.requireDevice(request.device).connection;
        connection?.sendNode(node('stream:error', {}, [node('conflict', { type: 'replaced' })]));
        connection?.close();
        return { done: true };
      }
      case 'stream-error': {
        const connection = this.requireDevice(request.device).connection;
        const content = request.reason ? [node(request.reason, {})] : undefined;
        connection?.sendNode(node('stream:error', { code: request.code !== undefined ? String(request.code) : undefined }, content));
        connection?.close();
        return { done: true };
      }
      case 'logout':
        this.logoutDevice(this.requireDevice(request.device), 'server_initiated', request.via);
        return { done: true };
      case 'restart':
        await this.restart(request.downMs ?? 0);
        return { done: true };
      case 'reachout-timelock':
        return { done: true, ...this.sendLimits.lock(this.requireAccount(request.device), request) };
      case 'new-chat-cap':
        return { done: true, ...this.sendLimits.cap(this.requireAccount(request.device), request) };
    }
  }

  /** A login or registration older than a standing client-outdated rule's minVersion (see ClientOutdatedRule). */
  private isOutdated(payload: proto.ClientPayload): boolean {
    const v = payload.userAgent?.appVersion;
    const version = [v?.primary ?? 0, v?.secondary ?? 0, v?.tertiary ?? 0];
    const phone = payload.username !== null && payload.username !== undefined ? String(payload.username) : undefined;
    const account = phone ? this.registry.get(phone) : undefined;
    const ref: DeviceRef | undefined = account ? { account, deviceId: payload.device ?? 0 } : undefined;
    const rule = this.faults.peek('client-outdated', (f) => !!ref && this.matchesDevice(f, ref));
    const min = rule ? parseWaVersion(rule.minVersion) : undefined;
    return !!min && compareWaVersions(version, min) < 0;
  }

  /**
   * The current WhatsApp Web version as web.whatsapp.com/sw.js carries it (`"client_revision":N`,
   * read by Baileys' fetchLatestWaWebVersion and whatsmeow's GetLatestVersion): the newest
   * client-outdated minVersion, else Baileys' default.
   */
  waWebVersion(): string {
    let current = [...DEFAULT_WA_WEB_VERSION];
    for (const fault of this.faults.list()) {
      const min = fault.rule.kind === 'client-outdated' ? parseWaVersion(fault.rule.minVersion) : undefined;
      if (min && compareWaVersions(min, current) > 0) current = min;
    }
    const data = JSON.stringify({ dynamic_data: { SiteData: { server_revision: current[2], client_revision: current[2] } } });
    return `self.__swData=JSON.parse(/*BTDS*/${JSON.stringify(data)});\n`;
  }

  listFaults(): ActiveFault[] {
    return this.faults.list();
  }

  removeFault(id: number): boolean {
    const removed = this.faults.remove(id);
    this.applyStandingFaults();
    return removed;
  }

  health(): { ok: boolean; websocketUrl: string; rootPublicKey: string; mediaHost?: string; accounts: number; connections: number } {
    return {
      ok: !this.stopped,
      websocketUrl: this.websocketUrl,
      rootPublicKey: this.rootPublicKey,
      mediaHost: this.media ? this.media.hostname : undefined,
      accounts: this.registry.all().length,
      connections: this.connections.size,
    };
  }

  /** Phone sends a media message: encrypts and uploads the file to the media server, then sends. */
  async sendMedia(phone: string, input: SendMediaInput): Promise<{ id: string }> {
    if (!this.media) throw new SimError(501, 'media server disabled');
    const kinds: MediaKind[] = ['image', 'video', 'audio', 'document', 'sticker'];
    if (!kinds.includes(input?.type)) throw new SimError(400, `type must be one of ${kinds.join('|')}`);
    if (typeof input.data !== 'string' || !input.data) throw new SimError(400, 'data (base64) is required');
    const plain = Buffer.from(input.data, 'base64');
    const encrypted = await encryptMedia(plain, input.type);
    const { directPath, url } = this.media.store(encrypted.encrypted, input.type);
    const defaults: Record<MediaKind, string> = {
      image: 'image/jpeg',
      video: 'video/mp4',
      audio: 'audio/ogg; codecs=opus',
      document: 'application/octet-stream',
      sticker: 'image/webp',
    };
    const common = {
      url,
      directPath,
      mediaKey: encrypted.mediaKey,
      fileEncSha256: encrypted.fileEncSha256,
      fileSha256: encrypted.fileSha256,
      fileLength: encrypted.fileLength,
      mediaKeyTimestamp: unixNow(),
      mimetype: input.mimetype ?? defaults[input.type],
    };
    const message: proto.IMessage =
      input.type === 'image'
        ? { imageMessage: { ...common, caption: input.caption } }
        : input.type === 'video'
          ? { videoMessage: { ...common, caption: input.caption, seconds: input.seconds } }
          : input.type === 'audio'
            ? { audioMessage: { ...common, ptt: !!input.ptt, seconds: input.seconds } }
            : input.type === 'document'
              ? { documentMessage: { ...common, fileName: input.fileName ?? 'file', title: input.fileName, caption: input.caption } }
              : { stickerMessage: { ...common } };
    return this.sendMessage(phone, input.to, { message });
  }

  /** Downloads and decrypts the media of a message the phone received. */
  async inboxMedia(phone: string, id: string): Promise<{ bytes: Buffer; mimetype: string }> {
    const entry = this.requireAccount(phone).inbox.find((e) => e.id === id);
    if (!entry?.message) throw new SimError(404, `no message ${id} in the inbox`);
    const message = proto.Message.fromObject(entry.message);
    const kinds: Array<[MediaKind, proto.Message.IImageMessage | null | undefined]> = [
      ['image', message.imageMessage],
      ['video', message.videoMessage],
      ['audio', message.audioMessage],
      ['document', message.documentMessage ?? message.documentWithCaptionMessage?.message?.documentMessage],
      ['sticker', message.stickerMessage],
    ];
    const found = kinds.find(([, m]) => !!m);
    if (!found || !found[1]) throw new SimError(404, `message ${id} has no media`);
    const [kind, media] = found;
    const stored = this.media?.fetch(media.directPath ?? media.url ?? '');
    if (!stored || !media.mediaKey) throw new SimError(404, 'media not stored on this simulator');
    return { bytes: await decryptMedia(stored.bytes, media.mediaKey, kind), mimetype: media.mimetype ?? 'application/octet-stream' };
  }

  /** Latency and ping faults act on live connections, so re-evaluate them on every change. */
  private applyStandingFaults(): void {
    for (const connection of this.connections) {
      const device = connection.deviceJid ? this.registry.findDevice(connection.deviceJid) : undefined;
      if (!device) continue;
      const ref = { account: device.account, deviceId: device.deviceId };
      connection.outboundDelayMs = this.faults.peek('latency', (f) => this.matchesDevice(f, ref))?.delayMs ?? 0;
      connection.ignorePings = !!this.faults.peek('ignore-pings', (f) => this.matchesDevice(f, ref));
    }
  }

  private requireAccount(phone: string): Account {
    const account = typeof phone === 'string' ? this.registry.resolveUser(phone) : undefined;
    if (!account) throw new SimError(404, `no account ${phone}`);
    return account;
  }

  private requireDevice(jid: string): LinkedDevice {
    const device = typeof jid === 'string' ? this.registry.findDevice(jid) : undefined;
    if (!device) throw new SimError(404, `no linked device ${jid}`);
    return device;
  }

  describeDevice(device: LinkedDevice): DeviceInfo {
    const d = device.declaration;
    return {
      jid: device.jid,
      lid: device.lidJid,
      phone: device.account.phone,
      deviceId: device.deviceId,
      keyIndex: device.keyIndex,
      status: device.status,
      connected: device.isConnected,
      pairingMethod: device.pairingMethod,
      pairedAt: new Date(device.pairedAt).toISOString(),
      os: d.os,
      systemName: d.os,
      browser: d.platformType?.toLowerCase(),
      platformType: d.platformType,
      requireFullSync: d.requireFullSync,
      historySyncConfig: d.historySyncConfig,
      fullSyncDaysLimit: d.fullSyncDaysLimit,
      recentSyncDaysLimit: d.recentSyncDaysLimit,
      pushName: device.lastLogin?.pushName ?? d.pushName,
      registration: d,
      lastLogin: device.lastLogin,
      loginCount: device.loginCount,
      privacyTokenIssues: device.privacyTokenIssues,
    };
  }
}

function describeAccount(account: Account): AccountInfo {
  return { phone: account.phone, jid: account.jid, lid: account.lidJid, name: account.name, business: account.business };
}

/** Flips bytes inside every `<enc>` so the recipient fails to decrypt and asks for a retry. */
function corruptEnc(stanza: BinaryNode): BinaryNode {
  if (!Array.isArray(stanza.content)) return stanza;
  return {
    ...stanza,
    content: stanza.content.map((c) => {
      if (c.tag !== 'enc' || !(c.content instanceof Uint8Array)) return c;
      const bytes = Buffer.from(c.content);
      for (let i = Math.floor(bytes.length / 2); i < bytes.length; i++) bytes[i] ^= 0x5a;
      return { ...c, content: bytes };
    }),
  };
}

function readOrCreateSeed(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf-8').trim();
  const seed = randomBytes(32).toString('hex');
  writeFileSync(file, `${seed}\n`, { mode: 0o600 });
  return seed;
}

function listenOn(server: HttpServer, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
