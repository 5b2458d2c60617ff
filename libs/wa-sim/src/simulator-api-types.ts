// The simulator's in-process API (WaSimulator, and the control routes over it): its options, what it
// takes (SendMediaInput, InboxQuery, SendOptions) and what it answers (AccountInfo, DeviceInfo); and the
// lookups that turn a call's phone or JID into an account or a device (a 404 otherwise).
import type { Account, AccountRegistry, DeviceDeclaration, LinkedDevice, PairingMethod } from './accounts';
import { SimError } from './errors';
import type { Logger } from './logger';

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
  /** Logins that replaced an open connection of the device (two sockets at once; the older one got a 440 conflict). */
  replacedLogins: number;
  /** Privacy-token issuances the device sent (a client issues once a week per contact). */
  privacyTokenIssues: number;
  /** Usync queries for device lists the device sent (a client caches a user's devices for a while). */
  deviceListQueries: number;
  /** Blocklist queries the device sent (WhatsApp Web asks once per login). */
  blocklistQueries: number;
  /** Ids of the messages pushed to the device that it has not receipted (or acked) yet: WhatsApp delivers them again at its next login. */
  unreceiptedMessages: string[];
}

type DeviceDeclarationLogin = NonNullable<LinkedDevice['lastLogin']>;

export interface InboxQuery {
  since?: number;
  includeOwn?: boolean;
}

export interface SendOptions {
  id?: string;
}

/** An account as the API answers it. */
export function describeAccount(account: Account): AccountInfo {
  return { phone: account.phone, jid: account.jid, lid: account.lidJid, name: account.name, business: account.business };
}

/** A linked device as the API answers it. */
export function describeDevice(device: LinkedDevice): DeviceInfo {
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
    replacedLogins: device.replacedLogins,
    privacyTokenIssues: device.privacyTokenIssues,
    deviceListQueries: device.deviceListQueries,
    blocklistQueries: device.blocklistQueries,
    unreceiptedMessages: [...device.pending.keys()].filter((key) => key.startsWith('message:')).map((key) => key.split(':')[1]),
  };
}

/** The account of an API call's phone (number, PN or LID JID); a 404 when there is none. */
export function requireAccount(registry: AccountRegistry, phone: string): Account {
  const account = typeof phone === 'string' ? registry.resolveUser(phone) : undefined;
  if (!account) throw new SimError(404, `no account ${phone}`);
  return account;
}

/** The linked device of an API call's JID; a 404 when there is none. */
export function requireDevice(registry: AccountRegistry, jid: string): LinkedDevice {
  const device = typeof jid === 'string' ? registry.findDevice(jid) : undefined;
  if (!device) throw new SimError(404, `no linked device ${jid}`);
  return device;
}
