// Single import point for the parts of Baileys the simulator reuses (codec, crypto, protobufs,
// Signal). Keeping the boundary in one file makes a Baileys upgrade easy to audit.
import {
  addTransactionCapability,
  BufferJSON,
  getMediaKeys,
  initAuthCreds,
  chatModificationToAppPatch,
  decodeSyncdPatch,
  encodeSyncdPatch,
  makeLtHashGenerator,
  newLTHashState,
  aesDecryptCTR,
  aesDecryptGCM,
  aesEncryptCTR,
  aesEncryptGCM,
  Curve,
  decodeBinaryNode,
  DEFAULT_CONNECTION_CONFIG,
  derivePairingCodeKey,
  encodeBinaryNode,
  encodeWAMessage,
  hkdf,
  hmacSign,
  jidDecode,
  jidEncode,
  NOISE_MODE,
  proto,
  unpadRandomMax16,
  WA_ADV_ACCOUNT_SIG_PREFIX,
} from '@whiskeysockets/baileys';
import type {
  AuthenticationCreds,
  BinaryNode,
  MediaType,
  ChatModification,
  WAPatchName,
  KeyPair,
  SignalDataSet,
  SignalDataTypeMap,
  SignalKeyStore,
  SignalRepositoryWithLIDStore,
} from '@whiskeysockets/baileys';

export {
  addTransactionCapability,
  BufferJSON,
  getMediaKeys,
  initAuthCreds,
  chatModificationToAppPatch,
  decodeSyncdPatch,
  encodeSyncdPatch,
  makeLtHashGenerator,
  newLTHashState,
  aesDecryptCTR,
  aesDecryptGCM,
  aesEncryptCTR,
  aesEncryptGCM,
  Curve,
  decodeBinaryNode,
  derivePairingCodeKey,
  encodeBinaryNode,
  encodeWAMessage,
  hkdf,
  hmacSign,
  jidDecode,
  jidEncode,
  NOISE_MODE,
  proto,
  unpadRandomMax16,
  WA_ADV_ACCOUNT_SIG_PREFIX,
};
export type {
  AuthenticationCreds,
  BinaryNode,
  MediaType,
  ChatModification,
  WAPatchName,
  KeyPair,
  SignalDataSet,
  SignalDataTypeMap,
  SignalKeyStore,
  SignalRepositoryWithLIDStore,
};

/** Baileys' logger interface (not re-exported from the package root). */
export type ILogger = Parameters<typeof DEFAULT_CONNECTION_CONFIG.makeSignalRepository>[1];

/** Baileys' libsignal-backed repository factory (1:1 sessions, sender keys, LID mapping). */
export const makeSignalRepository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository;
/** The WhatsApp Web version Baileys logs in with unless told otherwise. */
export const DEFAULT_WA_WEB_VERSION: readonly number[] = DEFAULT_CONNECTION_CONFIG.version;
