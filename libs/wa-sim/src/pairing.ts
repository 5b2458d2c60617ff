// Companion pairing as the primary phone does it: QR scan (B5/B6) and the pairing-code
// exchange (B7). Pure crypto/encoding helpers plus the pending-registration record.
import { randomBytes } from 'crypto';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { aesDecryptCTR, aesDecryptGCM, aesEncryptCTR, Curve, derivePairingCodeKey, hkdf, hmacSign, proto, WA_ADV_ACCOUNT_SIG_PREFIX } from './baileys';
import type { KeyPair } from './baileys';
import type { CompanionKeys, DeviceDeclaration } from './accounts';
import type { Connection } from './connection';
import { SimError } from './errors';

const WA_ADV_DEVICE_SIG_PREFIX = Buffer.from([6, 1]);

/** A companion that sent a registration payload and waits to be linked. */
export interface PendingRegistration {
  id: string;
  connection: Connection;
  noiseKey: Buffer;
  keys: CompanionKeys;
  declaration: DeviceDeclaration;
  refs: string[];
  createdAt: number;
  linkCode?: PendingLinkCode;
  /** Set while a phone is completing the link, so a second scan is refused. */
  linking?: boolean;
  /** ADV secrets (base64) retired by a companion_reg_refresh: a QR carrying one no longer links. */
  retiredAdvSecrets?: Set<string>;
}

export interface PendingLinkCode {
  phone: string;
  ref: Buffer;
  wrappedCompanionEphemeral: Buffer;
  companionNoiseKey: Buffer;
  platformId?: string;
  platformDisplay?: string;
  requestedAt: number;
}

export interface ParsedQr {
  ref: string;
  noiseKey: Buffer;
  identityKey: Buffer;
  advSecret: Buffer;
  platformId?: string;
}

const QR_PREFIX = 'https://wa.me/settings/linked_devices#';

export function parseQrString(qr: string): ParsedQr {
  const trimmed = qr.trim();
  const body = trimmed.startsWith(QR_PREFIX) ? trimmed.slice(QR_PREFIX.length) : trimmed;
  const parts = body.split(',');
  if (parts.length < 4) {
    throw new SimError(400, 'not a WhatsApp linking QR code');
  }
  const [ref, noise, identity, adv, platformId] = parts;
  const noiseKey = Buffer.from(noise, 'base64');
  const identityKey = Buffer.from(identity, 'base64');
  const advSecret = Buffer.from(adv, 'base64');
  if (!ref || noiseKey.length !== 32 || identityKey.length !== 32 || advSecret.length !== 32) {
    throw new SimError(400, 'malformed linking QR code');
  }
  return { ref, noiseKey, identityKey, advSecret, platformId };
}

/** Reads a QR code out of a PNG, given as a `data:image/png;base64,...` URI or raw base64. */
export function decodeQrImage(dataUri: string): string {
  const match = /^data:image\/png;base64,(.*)$/s.exec(dataUri.trim());
  const base64 = match ? match[1] : dataUri;
  let png: PNG;
  try {
    png = PNG.sync.read(Buffer.from(base64, 'base64'));
  } catch {
    throw new SimError(400, 'qr image is not a readable PNG');
  }
  const result = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  if (!result?.data) {
    throw new SimError(400, 'no QR code found in the image');
  }
  return result.data;
}

/** Accepts either the raw QR text or a PNG data URI, as a phone camera would. */
export function readQr(qr: string): ParsedQr {
  const text = qr.trim().startsWith('data:image/') ? decodeQrImage(qr) : qr;
  return parseQrString(text);
}

export interface PairSuccessInput {
  phoneIdentity: KeyPair;
  companionIdentity: Buffer;
  advSecret: Buffer;
  rawId: number;
  keyIndex: number;
}

/** `ADVSignedDeviceIdentityHMAC` for `<pair-success><device-identity>` (B6). */
export function buildDeviceIdentity(input: PairSuccessInput): Buffer {
  const details = Buffer.from(
    proto.ADVDeviceIdentity.encode({
      rawId: input.rawId,
      timestamp: Math.floor(Date.now() / 1000),
      keyIndex: input.keyIndex,
    }).finish(),
  );
  const accountSignature = Curve.sign(input.phoneIdentity.private, Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, details, input.companionIdentity]));
  const signed = Buffer.from(
    proto.ADVSignedDeviceIdentity.encode({
      details,
      accountSignatureKey: input.phoneIdentity.public,
      accountSignature,
    }).finish(),
  );
  const hmac = hmacSign(signed, input.advSecret);
  return Buffer.from(proto.ADVSignedDeviceIdentityHMAC.encode({ details: signed, hmac }).finish());
}

/** Checks the companion's counter-signature in `<pair-device-sign>`. */
export function verifyDeviceSignature(signedIdentity: Buffer, companionIdentity: Buffer, phoneIdentityPublic: Uint8Array): boolean {
  const account = proto.ADVSignedDeviceIdentity.decode(signedIdentity);
  if (!account.details || !account.deviceSignature) {
    return false;
  }
  const message = Buffer.concat([WA_ADV_DEVICE_SIG_PREFIX, account.details, companionIdentity, phoneIdentityPublic]);
  return Curve.verify(companionIdentity, message, account.deviceSignature);
}

/** Pairing codes are 8 Crockford base32 chars; users may type them with a dash or lowercase. */
export function normalizePairingCode(code: string): string {
  return code.replace(/[^0-9a-z]/gi, '').toUpperCase();
}

export async function unwrapCompanionEphemeral(wrapped: Buffer, code: string): Promise<Buffer> {
  if (wrapped.length < 80) {
    throw new SimError(400, 'wrapped companion key too short');
  }
  const salt = wrapped.subarray(0, 32);
  const iv = wrapped.subarray(32, 48);
  const key = await derivePairingCodeKey(code, salt);
  return aesDecryptCTR(wrapped.subarray(48, 80), key, iv);
}

export async function wrapPrimaryEphemeral(primaryEphemeralPublic: Uint8Array, code: string): Promise<Buffer> {
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const key = await derivePairingCodeKey(code, salt);
  return Buffer.concat([salt, iv, aesEncryptCTR(primaryEphemeralPublic, key, iv)]);
}

export interface KeyBundleResult {
  companionIdentity: Buffer;
  advSecret: Buffer;
}

/**
 * Opens `link_code_pairing_wrapped_key_bundle` (salt32‖iv12‖GCM(...)) and derives the ADV secret
 * the companion switched to, exactly as the client computes it.
 */
export function openKeyBundle(wrappedBundle: Buffer, primaryEphemeral: KeyPair, companionEphemeralPublic: Buffer, phoneIdentity: KeyPair): KeyBundleResult {
  const salt = wrappedBundle.subarray(0, 32);
  const iv = wrappedBundle.subarray(32, 44);
  const ciphertext = wrappedBundle.subarray(44);
  const companionShared = Curve.sharedKey(primaryEphemeral.private, companionEphemeralPublic);
  const bundleKey = hkdf(companionShared, 32, { salt, info: 'link_code_pairing_key_bundle_encryption_key' });
  let plaintext: Buffer;
  try {
    plaintext = aesDecryptGCM(ciphertext, bundleKey, iv, Buffer.alloc(0));
  } catch {
    throw new SimError(400, 'pairing code does not match the one shown by the companion');
  }
  const companionIdentity = plaintext.subarray(0, 32);
  const primaryIdentity = plaintext.subarray(32, 64);
  const random = plaintext.subarray(64, 96);
  if (!primaryIdentity.equals(Buffer.from(phoneIdentity.public))) {
    throw new SimError(400, 'key bundle names a different primary identity');
  }
  const identityShared = Curve.sharedKey(phoneIdentity.private, companionIdentity);
  const advSecret = Buffer.from(hkdf(Buffer.concat([companionShared, identityShared, random]), 32, { info: 'adv_secret' }));
  return { companionIdentity: Buffer.from(companionIdentity), advSecret };
}

export function randomRef(): string {
  // Real refs are opaque printable strings; keep ours URL- and comma-safe.
  return `2@${randomBytes(24)
    .toString('base64')
    .replace(/[+/=,]/g, '')}`;
}
