import type { HistoryRequest } from '@gw/contracts';
import type { InstanceEntity } from '@gw/persistence';
import { type Logger, outsideTraces, SsrfGuard } from '@gw/platform';
import { DEFAULT_CONNECTION_CONFIG, makeWASocket, type AuthenticationState, type WABrowserDescription, type WASocket } from '../baileys';
import type { SessionWorkerConfig } from '../config/session-worker.config';
import { surfaceAppStateConflicts } from './app-state-conflicts';
import { AppStateRecovery } from './app-state-recovery';
import { browserTuple, isBrowserProfile } from './browser-profile';
import { decryptedBuffer } from './decrypted-buffer';
import { DeviceLists } from './device-lists';
import { assertAcksCanBeHeld, deferringAcks, HeldAcks, rememberHeldAcks } from './held-acks';
import { ReceivedPlaintexts } from './received-plaintexts';
import type { StoredMessageLookup } from './stored-messages';
import { historySocketOptions } from './history-sync-limit';
import { receiveMessagesInOrder } from './messages-in-order';
import { keepEventsAtClose } from './events-at-close';
import { networkOptions, rememberFetchOptions } from './network-options';
import { rememberVerifiedSignatures } from './verified-signatures';
import { WaVersionSource } from './wa-version';

export interface SocketRequest {
  auth: AuthenticationState;
  /** The instance row: browser profile, system name and proxy come from here. */
  instance: InstanceEntity;
  /** History to request (new pairing only); null for a reconnect. */
  history: HistoryRequest | null;
  /** A pairing-code pairing must keep its first socket for the whole code lifetime. */
  pairingCode: boolean;
  logger: Logger;
  /** Resolves once the Signal keys written so far are stored (PostgresAuthState.keysStored): a receipt waits for it (ADR 0048). */
  keysStored?: () => Promise<void>;
}

/** Builds Baileys sockets with our defaults; the one place that calls makeWASocket. */
export class SocketFactory {
  /** A custom proxy is a URL a tenant gave: it passes the SSRF guard (network-options). */
  private readonly guard: SsrfGuard;
  /** The WhatsApp Web version every socket of this worker logs in with, learnt again on a 405. */
  readonly waVersion: WaVersionSource;
  /** Each instance's cache of its contacts' device lists, shared by its sockets on this worker (device-lists.ts). */
  readonly deviceLists = new DeviceLists();

  constructor(
    private readonly config: SessionWorkerConfig,
    /** Our own messages as stored, for a retry receipt that comes on a later socket (stored-messages.ts). */
    private readonly storedMessage?: StoredMessageLookup,
  ) {
    this.guard = new SsrfGuard(config.ssrfAllowlist ?? []);
    // A worker whose Baileys would receipt messages before they are stored does not start (held-acks.ts).
    assertAcksCanBeHeld();
    // The server's certificate chain is checked once, not at every handshake (verified-signatures.ts).
    rememberVerifiedSignatures();
    this.waVersion = new WaVersionSource({ configured: config.waWebVersion, url: config.waVersionUrl });
  }

  /** What the instance's sockets call themselves: the browser profile and system name. */
  browser(instance: InstanceEntity): WABrowserDescription {
    return browserTuple(isBrowserProfile(instance.browser) ? instance.browser : 'chrome', instance.systemName);
  }

  create(request: SocketRequest): WASocket {
    const { instance } = request;
    const network = networkOptions(instance.proxy, this.config.simulator, this.guard);
    // A collection whose patch did not match its MACs is fetched again from its snapshot (rc14 only skips the patch).
    const recovery = new AppStateRecovery(request.logger);
    // A received message's receipt waits for its write (ADR 0035): a worker that dies first loses nothing.
    // Their plaintexts are kept with the Signal sessions they moved, for a copy WhatsApp delivers again.
    const plaintexts = new ReceivedPlaintexts(request.logger);
    const acks = new HeldAcks(request.logger, plaintexts, request.keysStored);
    // Outside the trace of the request that placed the instance: what the socket reads later starts traces of its own.
    const socket = outsideTraces(() =>
      makeWASocket({
        auth: request.auth,
        logger: recovery.watch(baileysLogger(request.logger)),
        browser: this.browser(instance),
        version: this.waVersion.version,
        // Online presence on connect silences the phone's notifications; presence is set on request only.
        markOnlineOnConnect: false,
        defaultQueryTimeoutMs: this.config.queryTimeoutMs,
        // The device lists of the instance's earlier sockets (five minutes each): a reconnect does not query them all again.
        userDevicesCache: this.deviceLists.of(instance.id),
        ...historySocketOptions(request.history),
        // Baileys rotates QR refs (60 s, then 20 s each) and ends the socket when they run out. The
        // pairing code is bound to this socket's ephemeral key, so one ref must outlive the code.
        ...(request.pairingCode ? { qrTimeout: this.config.pairCodeTtlMs + 60_000 } : {}),
        ...network,
        // App state as whatsmeow reads it: a snapshot or patch whose MAC does not match is refused (rc14 skips the checks by default),
        // and the collection fetched again (AppStateRecovery).
        appStateMacVerification: { patch: true, snapshot: true },
        // Fenced or closed stores fail at once; a few quick retries cover a database blip.
        transactionOpts: { maxCommitRetries: 5, delayBetweenTriesMs: 500 },
        // A message WhatsApp delivers again after its connection closed between our decrypt and our receipt
        // is decrypted from the plaintext kept then (its Signal key is spent): stored, not nacked and lost.
        makeSignalRepository: decryptedBuffer.wrap(instance.id, DEFAULT_CONNECTION_CONFIG.makeSignalRepository, request.logger, plaintexts),
        // A phone's retry receipt for one of our messages is answered from our store when this socket did not send it.
        getMessage: async (key) => (key.id && this.storedMessage ? this.storedMessage(instance.id, key.id).catch(() => undefined) : undefined),
        ...deferringAcks(acks),
      }),
    );
    rememberHeldAcks(socket, acks);
    // Closed, the socket's last receipts may not have reached WhatsApp: their plaintexts are kept (RECEIPT_SETTLE_MS).
    socket.ev.on('connection.update', (update) => {
      if (update.connection === 'close') plaintexts.close();
    });
    // A sender's messages reach us in the order WhatsApp sent them (Baileys could swap a new contact's first two).
    receiveMessagesInOrder(socket, request.logger);
    // A message handled as the socket closes is still emitted to us (rc14's end() discarded it, receipt sent).
    keepEventsAtClose(socket);
    // An app-state patch WhatsApp refused as stale (409) fails, to be sent again, instead of passing as stored.
    surfaceAppStateConflicts(socket);
    recovery.attach(socket);
    // App-state collections we read beside Baileys download their blobs through the instance's proxy too.
    rememberFetchOptions(socket, network);
    return socket;
  }
}

/** Baileys is chatty: its child logger logs warnings and worse, unless ours is quieter still. */
function baileysLogger(logger: Logger): Logger {
  const level = logger.levelVal > 40 ? logger.level : 'warn';
  return logger.child({ component: 'baileys' }, { level });
}
