// The simulator's server side: the WebSocket listener and its connections, state persistence,
// delivery to companions and phones (with the delivery faults) and the stanzas companions send
// (simulator-stanzas.ts). WaSimulator (simulator.ts) adds the in-process API over it. Its parts:
// companion-login.ts (registration, login, activation, logout), simulator-iq-hooks.ts (the IQ answers),
// phone-state-api.ts (what a phone holds and changes: WaSimulator.phoneState).
import { existsSync, readFileSync, writeFileSync } from 'fs';
import { createServer } from 'http';
import type { Server as HttpServer } from 'http';
import type { AddressInfo } from 'net';
import { randomBytes } from 'crypto';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { jidDecode } from './baileys';
import { AccountRegistry, digitsOnly } from './accounts';
import type { LinkedDevice } from './accounts';
import type { Account, DeviceRef } from './accounts';
import { ProfileStore } from './profile';
import { createCertificateChain } from './certs';
import type { CertificateChain } from './certs';
import { Connection } from './connection';
import type { ConnectionHandler } from './connection';
import type { ResolvedOptions, SimContext } from './context';
import { FaultController } from './faults';
import { Delivery } from './delivery';
import { GroupStore } from './groups';
import { IqRouter } from './iq-router';
import { createLogger } from './logger';
import type { Logger } from './logger';
import { MessageRouter } from './message-router';
import type { BinaryNode } from './node-io';
import type { ClientFinish } from './noise-server';
import { BusinessStore } from './business';
import { PrivacyTokens } from './privacy-tokens';
import { SendLimits } from './send-limits';
import { CallCenter } from './calls';
import { MediaServer } from './media-server';
import { NewsletterStore } from './newsletters';
import { NewsletterMex } from './newsletter-mex';
import { PairingService } from './pairing-service';
import { PhoneAgent } from './phone';
import { readStateFile, STATE_VERSION, StatePersister } from './state-store';
import type { SimState } from './state-store';
import { CompanionLogin } from './companion-login';
import { SimulatorIqHooks } from './simulator-iq-hooks';
import { requireAccount, requireDevice } from './simulator-api-types';
import { PhoneStateApi } from './phone-state-api';
import type { SimulatorOptions } from './simulator-api-types';
import { StanzaDispatch } from './simulator-stanzas';

export class SimulatorServer implements ConnectionHandler, SimContext {
  readonly registry: AccountRegistry;
  readonly logger: Logger;
  readonly faults = new FaultController();
  /** Delivery to companions and phones, with the delivery faults. */
  private readonly delivery: Delivery = new Delivery(this);
  /** The accounts' own push names and profile pictures. */
  readonly profiles = new ProfileStore(this);
  readonly router: MessageRouter;
  readonly groups: GroupStore;
  readonly options: ResolvedOptions;
  readonly certs: CertificateChain;
  private readonly iqRouter: IqRouter;
  /** Registration, login, activation and logout of companions. */
  protected readonly login: CompanionLogin;
  /** The answers to the IQs the iq router hands up. */
  private readonly iqHooks: SimulatorIqHooks;
  /** The stanzas a logged-in companion sends, each to the part that handles it. */
  private readonly stanzas: StanzaDispatch;
  /** What each account's phone holds and changes (archive, history, blocklist, app state, inbox…). */
  readonly phoneState: PhoneStateApi;
  private readonly phones = new Map<string, PhoneAgent>();
  protected readonly connections = new Set<Connection>();
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
  protected stopped = false;
  private restarting?: Promise<void>;
  private handshakePeak = 0;
  private readonly persister?: StatePersister;
  private readonly rootKeySeed?: string;
  private readonly lidSalt: string;

  constructor(protected readonly input: SimulatorOptions = {}) {
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
    this.stanzas = new StanzaDispatch(this, this.iqRouter);
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
    this.delivery.deliver(target, stanza, sender);
  }

  deliverToCompanion(device: LinkedDevice, stanza: BinaryNode): void {
    this.delivery.toCompanion(device, stanza);
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
      await this.stanzas.handle(connection, stanza);
    } finally {
      // Prekey uploads and fetches, app state, groups, privacy… most stanzas change something.
      this.stateChanged();
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

  /** Waits until every phone has processed what was routed to it so far. */
  async settle(): Promise<void> {
    await Promise.all([...this.phones.values()].map((p) => p.idle()));
  }

  protected requireAccount(phone: string): Account {
    return requireAccount(this.registry, phone);
  }

  protected requireDevice(jid: string): LinkedDevice {
    return requireDevice(this.registry, jid);
  }
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
