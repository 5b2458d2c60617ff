// The simulator: WebSocket listener and connections, state persistence, delivery to companions and
// phones (with the delivery faults), the stanzas companions send, and the in-process API over accounts,
// devices, pairing, messages from phones and faults. Its parts: companion-login.ts (registration, login,
// activation, logout), simulator-iq-hooks.ts (the IQ answers), phone-state-api.ts (what a phone holds
// and changes: WaSimulator.phoneState), phone-media.ts, simulator-api-types.ts.
import { existsSync, readFileSync, writeFileSync } from 'fs';
import { createServer } from 'http';
import type { Server as HttpServer } from 'http';
import type { AddressInfo } from 'net';
import { randomBytes } from 'crypto';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { DEFAULT_WA_WEB_VERSION, jidDecode, proto } from './baileys';
import type { AuthenticationCreds } from './baileys';
import { AccountRegistry, deviceRefKey, digitsOnly } from './accounts';
import type { LinkedDevice } from './accounts';
import type { Account, DeviceRef } from './accounts';
import { ProfileStore } from './profile';
import { createCertificateChain } from './certs';
import type { CertificateChain } from './certs';
import { Connection } from './connection';
import type { ConnectionHandler } from './connection';
import type { ResolvedOptions, SimContext } from './context';
import { SimError } from './errors';
import { compareWaVersions, FaultController, isFaultRule, parseWaVersion } from './faults';
import type { ActiveFault, FaultRequest } from './faults';
import { UndecryptableDeliveries } from './undecryptable';
import { GroupStore } from './groups';
import { IqRouter } from './iq-router';
import { createLogger } from './logger';
import type { Logger } from './logger';
import { MessageRouter } from './message-router';
import type { BinaryNode } from './node-io';
import { node, unixNow } from './node-io';
import type { ClientFinish } from './noise-server';
import { BusinessStore } from './business';
import { PrivacyTokens } from './privacy-tokens';
import { SendLimits } from './send-limits';
import { CallCenter } from './calls';
import { MediaServer } from './media-server';
import { NewsletterStore } from './newsletters';
import { NewsletterMex } from './newsletter-mex';
import { PairingService } from './pairing-service';
import type { ProvisionOptions } from './pairing-service';
import { PhoneAgent } from './phone';
import { readStateFile, STATE_VERSION, StatePersister } from './state-store';
import type { SimState } from './state-store';
import { CompanionLogin } from './companion-login';
import { SimulatorIqHooks } from './simulator-iq-hooks';
import { decryptInboxMedia, uploadMediaMessage } from './phone-media';
import { describeAccount, describeDevice, requireAccount, requireDevice } from './simulator-api-types';
import { PhoneStateApi } from './phone-state-api';
import type { AccountInfo, DeviceInfo, SendMediaInput, SendOptions, SimulatorOptions } from './simulator-api-types';

const PENDING_LIMIT = 5_000;

export class WaSimulator implements ConnectionHandler, SimContext {
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
  /** Registration, login, activation and logout of companions. */
  private readonly login: CompanionLogin;
  /** The answers to the IQs the iq router hands up. */
  private readonly iqHooks: SimulatorIqHooks;
  /** What each account's phone holds and changes (archive, history, blocklist, app state, inbox…). */
  readonly phoneState: PhoneStateApi;
  private readonly phones = new Map<string, PhoneAgent>();
  private readonly connections = new Set<Connection>();
  readonly pairing = new PairingService({ qrRefs: () => this.options.qrRefs });
  private httpServer?: HttpServer;
  readonly media?: MediaServer;
  readonly calls: CallCenter;
  readonly newsletters: NewsletterStore;
  /** The channel queries (`w:mex`) over the newsletter store. */
  readonly newsletterMex: NewsletterMex;
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
    this.newsletterMex = new NewsletterMex(this.newsletters, this);
    this.business = new BusinessStore(this);
    this.privacyTokens = new PrivacyTokens(this);
    this.sendLimits = new SendLimits(this, this.business);
    this.login = new CompanionLogin(this);
    this.iqHooks = new SimulatorIqHooks(this, this.login);
    this.iqRouter = new IqRouter(this, this.iqHooks);
    this.phoneState = new PhoneStateApi(this, this.iqHooks);
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

  onClientFinish(connection: Connection, finish: ClientFinish): Promise<void> {
    return this.login.onClientFinish(connection, finish);
  }

  serverHelloDelayMs(): number {
    return this.faults.peek('slow-handshake', () => true)?.delayMs ?? 0;
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

  // ------------------------------------------------------------------ pairing

  /** The account's phone scans a companion's QR (raw string or PNG data URI). */
  async scanQr(phone: string, qr: string): Promise<DeviceInfo> {
    const account = this.accountForLinking(phone);
    const refresh = this.faults.take('reg-refresh', (f) => this.matchesDevice(f, { account, deviceId: 0 }));
    const device = await this.pairing.scanQr(account, qr, { refresh: Boolean(refresh) });
    this.stateChanged();
    return describeDevice(device);
  }

  /** The account's phone enters the 8-character code a companion displayed. */
  async enterPairingCode(phone: string, code: string): Promise<DeviceInfo> {
    const device = await this.pairing.enterPairingCode(this.accountForLinking(phone), code);
    this.stateChanged();
    return describeDevice(device);
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
    return { device: describeDevice(result.device), creds: result.creds };
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

  getDevice(jid: string): DeviceInfo {
    const device = this.registry.findDevice(jid);
    if (!device) throw new SimError(404, `no linked device ${jid}`);
    return describeDevice(device);
  }

  listDevices(phone: string): DeviceInfo[] {
    return [...this.requireAccount(phone).devices.values()].map((d) => describeDevice(d));
  }

  dropDevice(jid: string): void {
    const device = this.requireDevice(jid);
    device.connection?.destroy();
  }

  /** Logs a linked device out from the server side (like removing it on the phone). */
  logout(jid: string, via: 'stream-error' | 'failure' = 'stream-error'): void {
    this.login.logoutDevice(this.requireDevice(jid), 'server_initiated', via);
  }

  /** Waits until every phone has processed what was routed to it so far. */
  async settle(): Promise<void> {
    await Promise.all([...this.phones.values()].map((p) => p.idle()));
  }

  async injectFault(request: FaultRequest): Promise<{ id?: number; done: boolean }> {
    if (isFaultRule(request)) {
      const fault = this.faults.add(request);
      if (request.kind === 'latency' || request.kind === 'ignore-pings') this.login.applyStandingFaults(this.connections);
      return { id: fault.id, done: false };
    }
    switch (request.kind) {
      case 'clear':
        this.faults.clear();
        this.sendLimits.clear();
        this.login.applyStandingFaults(this.connections);
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
        this.login.logoutDevice(this.requireDevice(request.device), 'server_initiated', request.via);
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
    this.login.applyStandingFaults(this.connections);
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
    const message = await uploadMediaMessage(this.media, input);
    return this.sendMessage(phone, input.to, { message });
  }

  /** Downloads and decrypts the media of a message the phone received. */
  inboxMedia(phone: string, id: string): Promise<{ bytes: Buffer; mimetype: string }> {
    return decryptInboxMedia(
      this.media,
      this.requireAccount(phone).inbox.find((e) => e.id === id),
      id,
    );
  }

  private requireAccount(phone: string): Account {
    return requireAccount(this.registry, phone);
  }

  private requireDevice(jid: string): LinkedDevice {
    return requireDevice(this.registry, jid);
  }
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
