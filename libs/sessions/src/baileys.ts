// The one import point for Baileys in this lib: an upgrade is audited here, and everything else
// depends on these names only.
import {
  BufferJSON,
  Curve,
  DisconnectReason,
  generateSignalPubKey,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  initAuthCreds,
  jidDecode,
  makeCacheableSignalKeyStore,
  makeWASocket,
  proto,
  WA_CERT_DETAILS,
} from '@whiskeysockets/baileys';
import type {
  AuthenticationCreds,
  AuthenticationState,
  ConnectionState,
  SignalDataSet,
  SignalDataTypeMap,
  SignalKeyStore,
  UserFacingSocketConfig,
  WABrowserDescription,
  WASocket,
} from '@whiskeysockets/baileys';

export {
  BufferJSON,
  Curve,
  generateSignalPubKey,
  DisconnectReason,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  initAuthCreds,
  jidDecode,
  makeCacheableSignalKeyStore,
  makeWASocket,
  proto,
  WA_CERT_DETAILS,
};
export type {
  AuthenticationCreds,
  AuthenticationState,
  ConnectionState,
  SignalDataSet,
  SignalDataTypeMap,
  SignalKeyStore,
  UserFacingSocketConfig,
  WABrowserDescription,
  WASocket,
};

export type SignalKeyType = keyof SignalDataTypeMap;

/** The status code Baileys puts on the error that ended a socket (a Boom), if any. */
export function disconnectStatusCode(error: unknown): number | undefined {
  const output = (error as { output?: { statusCode?: unknown } } | undefined)?.output;
  return typeof output?.statusCode === 'number' ? output.statusCode : undefined;
}

// Inbound messaging (messaging/**): message decoding helpers and event shapes.
export { decryptPollVote, getDevice, isJidGroup, jidNormalizedUser } from '@whiskeysockets/baileys';
export type { BaileysEventMap, BinaryNode, Contact, GroupMetadata, MessageUserReceiptUpdate, WAMessage, WAMessageUpdate } from '@whiskeysockets/baileys';

// Pairing (socket/pairing-code.ts, socket/companion-reg-refresh.ts) and the WhatsApp Web version (socket/wa-version.ts).
export {
  aesEncryptCTR,
  bytesToCrockford,
  DEFAULT_CONNECTION_CONFIG,
  derivePairingCodeKey,
  getCompanionPlatformId,
  jidEncode,
  S_WHATSAPP_NET,
} from '@whiskeysockets/baileys';
export type { WAVersion } from '@whiskeysockets/baileys';

// The device-list cache every socket of an instance shares (socket/device-lists.ts).
export { DEFAULT_CACHE_TTLS } from '@whiskeysockets/baileys';
export type { PossiblyExtendedCacheStore } from '@whiskeysockets/baileys';

// The tctoken helpers Baileys uses for an issued privacy token (not exported from its index; see
// socket/issued-tc-tokens.ts for why we call them ourselves).
export { buildMergedTcTokenIndexWrite, resolveTcTokenJid, storeTcTokensFromIqResult } from '@whiskeysockets/baileys/lib/Utils/tc-token-utils.js';
