import { createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCallback, type ScryptOptions } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip as gunzipCallback, gzip as gzipCallback } from 'node:zlib';

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: ScryptOptions) => Promise<Buffer>;
const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

/**
 * The encrypted envelope of a moved session (issue #40): `gwsession1.<header>.<ciphertext>`, both parts
 * base64url. The header (JSON) names the version, the KDF with its parameters and salt, and the cipher
 * with its nonce; the ciphertext is AES-256-GCM over the gzipped JSON content, its 16-byte tag appended,
 * with `gwsession1.<header>` as additional authenticated data: a changed header (a weaker KDF, another
 * nonce) fails authentication like a changed ciphertext. The key is scrypt(passphrase, salt) with the
 * OWASP parameters (N=2^17, r=8, p=1); a fresh random salt and nonce for every bundle.
 */
export const BUNDLE_PREFIX = 'gwsession1';

export const BUNDLE_KDF = { N: 2 ** 17, r: 8, p: 1 } as const;
/** What an imported header may ask for: enough for any sane parameters, not a memory or CPU bomb. */
const KDF_BOUNDS = { minLogN: 14, maxLogN: 20, r: 8, maxP: 4 } as const;
const SALT_BYTES = 16;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Uncompressed content's bound on import (a gzip bomb must not fill the memory). */
const MAX_CONTENT_BYTES = 256 * 1024 * 1024;

interface BundleHeader {
  v: 1;
  kdf: { name: 'scrypt'; N: number; r: number; p: number; salt: string };
  cipher: { name: 'aes-256-gcm'; nonce: string };
  zip: 'gzip';
}

/** Why a bundle cannot be opened: `malformed` (not a bundle of ours), `cannot_decrypt` (wrong passphrase, or changed). */
export class SessionBundleError extends Error {
  constructor(
    readonly reason: 'malformed' | 'cannot_decrypt',
    message: string,
  ) {
    super(message);
    this.name = 'SessionBundleError';
  }
}

/** Encrypts `content` (any JSON value) under `passphrase` into a bundle string. */
export async function sealBundle(content: unknown, passphrase: string, kdf: { N: number; r: number; p: number } = BUNDLE_KDF): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const nonce = randomBytes(NONCE_BYTES);
  const header: BundleHeader = {
    v: 1,
    kdf: { name: 'scrypt', ...kdf, salt: salt.toString('base64url') },
    cipher: { name: 'aes-256-gcm', nonce: nonce.toString('base64url') },
    zip: 'gzip',
  };
  const aad = `${BUNDLE_PREFIX}.${Buffer.from(JSON.stringify(header)).toString('base64url')}`;
  const key = await deriveKey(passphrase, salt, kdf);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad));
  const plaintext = await gzip(Buffer.from(JSON.stringify(content)));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return `${aad}.${ciphertext.toString('base64url')}`;
}

/**
 * Opens a bundle: its content, parsed. Throws SessionBundleError: `malformed` for anything that is not a
 * well-formed bundle of this version (before any key is derived), `cannot_decrypt` when authentication
 * fails — a wrong passphrase and a changed bundle are one answer, so the error is no oracle.
 */
export async function openBundle(bundle: string, passphrase: string): Promise<unknown> {
  const parts = bundle.trim().split('.');
  if (parts.length !== 3 || parts[0] !== BUNDLE_PREFIX) throw malformed(`a bundle starts with "${BUNDLE_PREFIX}." and has three parts separated by dots`);
  const header = parseHeader(parts[1]);
  const ciphertext = decodeBase64Url(parts[2], 'ciphertext');
  if (ciphertext.length <= TAG_BYTES) throw malformed('the ciphertext is too short');
  const salt = decodeBase64Url(header.kdf.salt, 'salt');
  const nonce = decodeBase64Url(header.cipher.nonce, 'nonce');
  if (salt.length < SALT_BYTES) throw malformed('the salt is too short');
  if (nonce.length !== NONCE_BYTES) throw malformed('the nonce must be 12 bytes');
  const key = await deriveKey(passphrase, salt, header.kdf);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(`${parts[0]}.${parts[1]}`));
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - TAG_BYTES));
  let plaintext: Buffer;
  try {
    plaintext = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new SessionBundleError('cannot_decrypt', 'Cannot decrypt the bundle: wrong passphrase, or the bundle was changed');
  }
  try {
    return JSON.parse((await gunzip(plaintext, { maxOutputLength: MAX_CONTENT_BYTES })).toString('utf8'));
  } catch {
    throw malformed('its content is not gzipped JSON');
  }
}

function parseHeader(encoded: string): BundleHeader {
  let header: unknown;
  try {
    header = JSON.parse(decodeBase64Url(encoded, 'header').toString('utf8'));
  } catch (error) {
    if (error instanceof SessionBundleError) throw error;
    throw malformed('its header is not JSON');
  }
  const h = header as Partial<BundleHeader> | null;
  if (!h || typeof h !== 'object' || h.v !== 1) throw malformed('unknown bundle version');
  const kdf = h.kdf;
  if (!kdf || kdf.name !== 'scrypt' || typeof kdf.salt !== 'string') throw malformed('unknown key derivation');
  const logN = Math.log2(kdf.N);
  if (!Number.isInteger(logN) || logN < KDF_BOUNDS.minLogN || logN > KDF_BOUNDS.maxLogN || kdf.r !== KDF_BOUNDS.r)
    throw malformed('scrypt parameters out of bounds');
  if (!Number.isInteger(kdf.p) || kdf.p < 1 || kdf.p > KDF_BOUNDS.maxP) throw malformed('scrypt parameters out of bounds');
  if (!h.cipher || h.cipher.name !== 'aes-256-gcm' || typeof h.cipher.nonce !== 'string') throw malformed('unknown cipher');
  if (h.zip !== 'gzip') throw malformed('unknown compression');
  return h as BundleHeader;
}

function deriveKey(passphrase: string, salt: Buffer, kdf: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128 · N · r bytes; Node's default ceiling (32 MiB) is below the parameters used here.
  return scrypt(passphrase.normalize('NFC'), salt, 32, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * kdf.N * kdf.r + 1024 * 1024 });
}

function decodeBase64Url(value: string, what: string): Buffer {
  if (!/^[A-Za-z0-9_-]+$/.test(value)) throw malformed(`its ${what} is not base64url`);
  return Buffer.from(value, 'base64url');
}

const malformed = (why: string) => new SessionBundleError('malformed', `Malformed bundle: ${why}`);
