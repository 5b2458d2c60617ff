// Accounts (a phone number with a LID and a simulated primary phone) and the companion devices
// linked to them. Everything here is in memory and survives socket restarts.
import { createHash, randomBytes, randomInt } from 'crypto';
import { jidDecode } from './baileys';
import type { BinaryNode } from './node-io';
import type { PreKeyBundle, SignalDeviceState, SignedPreKeyPublic } from './signal-device';
import { SignalDevice } from './signal-device';
import type { Logger } from './logger';
import type { Connection } from './connection';

export const PN_SERVER = 's.whatsapp.net';
export const LID_SERVER = 'lid';

/** What a companion declared when it registered (ClientPayload + DeviceProps). */
export interface DeviceDeclaration {
  os?: string;
  platformType?: string;
  platformTypeCode?: number;
  propsVersion?: string;
  requireFullSync?: boolean;
  historySyncConfig?: Record<string, unknown>;
  fullSyncDaysLimit?: number;
  fullSyncSizeMbLimit?: number;
  recentSyncDaysLimit?: number;
  storageQuotaMb?: number;
  userAgentPlatform?: string;
  appVersion?: string;
  userAgentDevice?: string;
  osVersion?: string;
  releaseChannel?: string;
  locale?: string;
  webSubPlatform?: string;
  pushName?: string;
  buildHash?: string;
  /** From the pairing-code flow: companion_platform_id / companion_platform_display. */
  companionPlatformId?: string;
  companionPlatformDisplay?: string;
  /** Last field of the QR string (companion web client type). */
  qrPlatformId?: string;
}

export interface LoginDeclaration {
  at: number;
  pushName?: string;
  passive?: boolean;
  pull?: boolean;
  userAgentPlatform?: string;
  appVersion?: string;
  webSubPlatform?: string;
  connectType?: string;
  connectReason?: string;
  lidDbMigrated?: boolean;
}

export interface CompanionKeys {
  registrationId: number;
  identityKey: Buffer;
  signedPreKey: SignedPreKeyPublic;
  preKeys: Map<number, Buffer>;
}

export type PairingMethod = 'qr' | 'code' | 'provisioned';

export class LinkedDevice {
  status: 'active' | 'logged-out' = 'active';
  connection?: Connection;
  lastLogin?: LoginDeclaration;
  loginCount = 0;
  /**
   * Logins that replaced an open connection of this device (`stream:error` conflict `replaced`, a 440 at the
   * client) since the simulator started: two sockets held one device at once.
   */
  replacedLogins = 0;
  /** Privacy-token issuances (`<iq xmlns="privacy"><tokens>`) this device sent since the simulator started. */
  privacyTokenIssues = 0;
  /**
   * Usync queries (`<iq xmlns="usync">`) with a `<devices>` protocol this device sent since the simulator started:
   * a client asks for a user's devices before its first message to that user, unless it has them cached.
   */
  deviceListQueries = 0;
  /** Blocklist queries (`<iq xmlns="blocklist" type="get">`) this device sent since the simulator started (WhatsApp Web: one per login). */
  blocklistQueries = 0;
  /** Called after a one-time prekey was handed out (the simulator sends PreKeyLow notifications). */
  onPreKeyConsumed?: (device: LinkedDevice) => void;
  /** Stanzas pushed to the device and not yet acknowledged, redelivered on the next login. */
  readonly pending = new Map<string, BinaryNode>();
  /** The phone pushes the initial history sync once, on the first login after pairing. */
  historySent = false;
  pairedAt = Date.now();

  constructor(
    readonly account: Account,
    readonly deviceId: number,
    readonly keyIndex: number,
    readonly noiseKey: Buffer,
    readonly keys: CompanionKeys,
    readonly declaration: DeviceDeclaration,
    readonly pairingMethod: PairingMethod,
  ) {}

  get jid(): string {
    return `${this.account.phone}:${this.deviceId}@${PN_SERVER}`;
  }

  get lidJid(): string {
    return `${this.account.lidUser}:${this.deviceId}@${LID_SERVER}`;
  }

  get isConnected(): boolean {
    return !!this.connection?.isTransportReady;
  }

  /** Public bundle for a key fetch; consumes one uploaded one-time prekey when available. */
  takeBundle(): PreKeyBundle {
    const bundle: PreKeyBundle = {
      registrationId: this.keys.registrationId,
      identityKey: this.keys.identityKey,
      signedPreKey: this.keys.signedPreKey,
    };
    const first = this.keys.preKeys.entries().next();
    if (!first.done) {
      const [keyId, publicKey] = first.value;
      this.keys.preKeys.delete(keyId);
      bundle.preKey = { keyId, publicKey };
      this.onPreKeyConsumed?.(this);
    }
    return bundle;
  }

  toState(): LinkedDeviceState {
    return {
      deviceId: this.deviceId,
      keyIndex: this.keyIndex,
      noiseKey: this.noiseKey,
      keys: { ...this.keys, preKeys: [...this.keys.preKeys.entries()] },
      declaration: this.declaration,
      pairingMethod: this.pairingMethod,
      status: this.status,
      pairedAt: this.pairedAt,
      loginCount: this.loginCount,
      lastLogin: this.lastLogin,
      historySent: this.historySent,
      pending: [...this.pending.entries()],
    };
  }

  static fromState(account: Account, state: LinkedDeviceState): LinkedDevice {
    const keys: CompanionKeys = { ...state.keys, preKeys: new Map(state.keys.preKeys) };
    const device = new LinkedDevice(account, state.deviceId, state.keyIndex, state.noiseKey, keys, state.declaration, state.pairingMethod);
    device.status = state.status;
    device.pairedAt = state.pairedAt;
    device.loginCount = state.loginCount;
    device.lastLogin = state.lastLogin;
    device.historySent = state.historySent;
    for (const [key, stanza] of state.pending) device.pending.set(key, stanza);
    return device;
  }
}

/** A linked companion as the state file keeps it (no socket). */
export interface LinkedDeviceState {
  deviceId: number;
  keyIndex: number;
  noiseKey: Buffer;
  keys: Omit<CompanionKeys, 'preKeys'> & { preKeys: Array<[number, Buffer]> };
  declaration: DeviceDeclaration;
  pairingMethod: PairingMethod;
  status: 'active' | 'logged-out';
  pairedAt: number;
  loginCount: number;
  lastLogin?: LoginDeclaration;
  historySent: boolean;
  /** Stanzas still waiting for the device's ack (the offline queue). */
  pending: Array<[string, BinaryNode]>;
}

/** An account (phone, LID, the phone's Signal stack, linked devices, stores) as the state file keeps it. */
export interface AccountState {
  phone: string;
  lidUser: string;
  name: string;
  business: boolean;
  advRawId: number;
  appStateKey: AppStateKey;
  appState: Array<[string, AppStateCollection]>;
  blocklist: string[];
  privacy: Record<string, string>;
  autoReceipts: AutoReceiptSettings;
  statusPrivacy: Account['statusPrivacy'];
  history?: Array<Record<string, unknown>>;
  nextDeviceId: number;
  nextKeyIndex: number;
  inboxSeq: number;
  inbox: InboxEntry[];
  outbox: OutboxEntry[];
  /** The phone's Signal identity, prekeys and sessions; absent if it never needed one. */
  signal?: SignalDeviceState;
  devices: LinkedDeviceState[];
}

export interface InboxEntry {
  id: string;
  /** Sender's user JID (phone-number form). */
  from: string;
  fromLid: string;
  /** The exact sending device. */
  fromDevice: string;
  /** The chat as the sender addressed it (a user JID or a group JID). */
  to: string;
  participant?: string;
  type: string;
  fromMe: boolean;
  message: Record<string, unknown> | null;
  decryptError?: string;
  timestamp: number;
  receivedAt: number;
  seq: number;
  /** Times the same message (same key) arrived again after this first copy; shown once. */
  redeliveries?: number;
}

export type ReceiptType = 'delivered' | 'read' | 'played';

export interface OutboxEntry {
  id: string;
  to: string;
  type: string;
  message: Record<string, unknown>;
  timestamp: number;
  status: 'sent' | 'server-ack' | ReceiptType;
  receipts: Array<{ from: string; type: ReceiptType | 'retry'; at: number }>;
}

export interface AutoReceiptSettings {
  /** Delay before the phone sends a delivery receipt for a received message; null disables. */
  deliveredMs: number | null;
  /** Delay before a read receipt; null (default) means only on demand. */
  readMs: number | null;
}

export interface AppStateCollection {
  version: number;
  patches: Array<{ version: number; bytes: Buffer }>;
}

export interface AppStateKey {
  keyId: Buffer;
  keyData: Buffer;
  timestamp: number;
}

export class Account {
  readonly jid: string;
  readonly lidJid: string;
  private signalDevice?: SignalDevice;
  readonly devices = new Map<number, LinkedDevice>();
  readonly inbox: InboxEntry[] = [];
  readonly outbox = new Map<string, OutboxEntry>();
  advRawId = randomInt(1, 2 ** 31);
  readonly appState = new Map<string, AppStateCollection>();
  appStateKey: AppStateKey = {
    keyId: randomBytes(6),
    keyData: randomBytes(32),
    timestamp: Date.now(),
  };
  readonly blocklist = new Set<string>();
  privacy: Record<string, string> = {
    readreceipts: 'all',
    last: 'all',
    online: 'all',
    profile: 'all',
    status: 'all',
    groupadd: 'all',
    calladd: 'all',
  };
  autoReceipts: AutoReceiptSettings = { deliveredMs: 0, readMs: null };
  /**
   * Who sees this account's status updates (stories), as the phone keeps it: all saved contacts
   * (`contacts`), saved contacts except `list` (`blacklist`), or only `list` (`whitelist`). Null until the
   * account stores one: the server then answers the status privacy query 404 item-not-found, and clients take
   * WhatsApp's default, contacts (whatsmeow broadcast.go:102-104).
   */
  statusPrivacy: { type: 'contacts' | 'blacklist' | 'whitelist'; list: string[] } | null = null;
  /** HistorySync protos (as JSON objects) the phone pushes to a newly paired companion. */
  history: Array<Record<string, unknown>> | undefined;
  private nextDeviceId = 1;
  private nextKeyIndex = 1;
  inboxSeq = 0;

  constructor(
    readonly phone: string,
    readonly lidUser: string,
    public name: string,
    public business: boolean,
    private readonly logger: Logger,
  ) {
    this.jid = `${phone}@${PN_SERVER}`;
    this.lidJid = `${lidUser}@${LID_SERVER}`;
  }

  /** The phone's Signal identity and sessions, created on first use (most accounts in a load run never need it). */
  get signal(): SignalDevice {
    this.signalDevice ??= new SignalDevice(this.logger);
    return this.signalDevice;
  }

  closeSignal(): void {
    this.signalDevice?.close();
  }

  allocateDevice(): { deviceId: number; keyIndex: number } {
    // Device 99 is reserved for hosted devices in Baileys.
    if (this.nextDeviceId === 99) {
      this.nextDeviceId++;
    }
    return { deviceId: this.nextDeviceId++, keyIndex: this.nextKeyIndex++ };
  }

  activeDevices(): LinkedDevice[] {
    return [...this.devices.values()].filter((d) => d.status === 'active');
  }

  /** Phone bundle for key fetches of device 0. */
  phoneBundle(): PreKeyBundle {
    return this.signal.bundle(true);
  }

  toState(): AccountState {
    return {
      phone: this.phone,
      lidUser: this.lidUser,
      name: this.name,
      business: this.business,
      advRawId: this.advRawId,
      appStateKey: this.appStateKey,
      appState: [...this.appState.entries()],
      blocklist: [...this.blocklist],
      privacy: this.privacy,
      autoReceipts: this.autoReceipts,
      statusPrivacy: this.statusPrivacy,
      history: this.history,
      nextDeviceId: this.nextDeviceId,
      nextKeyIndex: this.nextKeyIndex,
      inboxSeq: this.inboxSeq,
      inbox: this.inbox,
      outbox: [...this.outbox.values()],
      signal: this.signalDevice?.toState(),
      devices: [...this.devices.values()].map((d) => d.toState()),
    };
  }

  /** Fills a freshly constructed account from its saved state. */
  restore(state: AccountState): void {
    this.advRawId = state.advRawId;
    this.appStateKey = state.appStateKey;
    for (const [name, collection] of state.appState) this.appState.set(name, collection);
    for (const jid of state.blocklist) this.blocklist.add(jid);
    this.privacy = { ...this.privacy, ...state.privacy };
    this.autoReceipts = state.autoReceipts;
    this.statusPrivacy = state.statusPrivacy ?? null;
    this.history = state.history;
    this.nextDeviceId = state.nextDeviceId;
    this.nextKeyIndex = state.nextKeyIndex;
    this.inboxSeq = state.inboxSeq;
    this.inbox.push(...state.inbox);
    for (const entry of state.outbox) this.outbox.set(entry.id, entry);
    if (state.signal) this.signalDevice = new SignalDevice(this.logger, state.signal);
    for (const device of state.devices) this.devices.set(device.deviceId, LinkedDevice.fromState(this, device));
  }
}

/** A device address inside the simulated network: deviceId 0 is the account's phone. */
export interface DeviceRef {
  account: Account;
  deviceId: number;
}

export function deviceRefKey(ref: DeviceRef): string {
  return `${ref.account.phone}:${ref.deviceId}`;
}

export function digitsOnly(value: string): string {
  return value.replace(/\D/g, '');
}

/** Stable pseudo-random LID user for a phone number, so separately started simulators agree. */
export function lidForPhone(phone: string, salt: string): string {
  const digest = createHash('sha256').update(`lid:${salt}:${phone}`).digest();
  let digits = '';
  for (const byte of digest) {
    digits += (byte % 10).toString();
    if (digits.length === 14) {
      break;
    }
  }
  return `1${digits}`;
}

export class AccountRegistry {
  private readonly byPhone = new Map<string, Account>();
  private readonly byLid = new Map<string, Account>();

  constructor(
    private readonly lidSalt: string,
    private readonly logger: Logger,
  ) {}

  create(phone: string, name?: string, business = false): Account {
    const existing = this.byPhone.get(phone);
    if (existing) {
      if (name) {
        existing.name = name;
      }
      return existing;
    }
    let lid = lidForPhone(phone, this.lidSalt);
    while (this.byLid.has(lid)) {
      lid = `1${randomInt(10 ** 13, 10 ** 14 - 1)}`;
    }
    const account = new Account(phone, lid, name ?? `Sim ${phone.slice(-4)}`, business, this.logger);
    this.byPhone.set(phone, account);
    this.byLid.set(lid, account);
    return account;
  }

  get(phone: string): Account | undefined {
    return this.byPhone.get(digitsOnly(phone));
  }

  /** Puts back an account from the state file (replacing one with the same phone, if any). */
  restore(state: AccountState): Account {
    const account = new Account(state.phone, state.lidUser, state.name, state.business, this.logger);
    account.restore(state);
    this.byPhone.set(account.phone, account);
    this.byLid.set(account.lidUser, account);
    return account;
  }

  all(): Account[] {
    return [...this.byPhone.values()];
  }

  /** Account for a user or device JID in PN or LID form, or a bare phone number. */
  resolveUser(jidOrPhone: string): Account | undefined {
    if (!jidOrPhone.includes('@')) {
      return this.get(jidOrPhone);
    }
    const decoded = jidDecode(jidOrPhone);
    if (!decoded?.user) {
      return undefined;
    }
    if (decoded.server === LID_SERVER) {
      return this.byLid.get(decoded.user);
    }
    if (decoded.server === PN_SERVER || decoded.server === 'c.us') {
      return this.byPhone.get(decoded.user);
    }
    return undefined;
  }

  resolveDevice(jid: string): DeviceRef | undefined {
    const account = this.resolveUser(jid);
    if (!account) {
      return undefined;
    }
    const deviceId = jidDecode(jid)?.device ?? 0;
    if (deviceId !== 0) {
      const device = account.devices.get(deviceId);
      if (!device || device.status !== 'active') {
        return undefined;
      }
    }
    return { account, deviceId };
  }

  findDevice(jid: string): LinkedDevice | undefined {
    const account = this.resolveUser(jid);
    const deviceId = jidDecode(jid)?.device;
    if (!account || !deviceId) {
      return undefined;
    }
    return account.devices.get(deviceId);
  }

  isLid(jid: string): boolean {
    return jidDecode(jid)?.server === LID_SERVER;
  }

  close(): void {
    for (const account of this.byPhone.values()) {
      account.closeSignal();
    }
  }
}

/** JID of a device in PN or LID form. Device 0 is written without the device part. */
export function deviceJid(account: Account, deviceId: number, form: 'pn' | 'lid'): string {
  const user = form === 'lid' ? account.lidUser : account.phone;
  const server = form === 'lid' ? LID_SERVER : PN_SERVER;
  return deviceId ? `${user}:${deviceId}@${server}` : `${user}@${server}`;
}

export function userJid(account: Account, form: 'pn' | 'lid'): string {
  return form === 'lid' ? account.lidJid : account.jid;
}
