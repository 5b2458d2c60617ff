// The simulator's own Noise certificate chain: root → intermediate → leaf, each signed with
// XEdDSA over Curve25519 like WhatsApp's. Baileys trusts it once the client process sets
// `WA_CERT_DETAILS.PUBLIC_KEY` to our root public key (it never binds the leaf to the static key).
import { createHash, createPrivateKey, createPublicKey, randomBytes } from 'crypto';
import { Curve, proto } from './baileys';
import type { KeyPair } from './baileys';

const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const X25519_SPKI_PREFIX_LENGTH = 12;

/** Curve25519 key pair from a fixed 32-byte private key (same raw format as `Curve.generateKeyPair`). */
export function keyPairFromPrivate(privateKey: Buffer): KeyPair {
  if (privateKey.length !== 32) {
    throw new Error('private key must be 32 bytes');
  }
  const keyObject = createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, privateKey]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(keyObject).export({ format: 'der', type: 'spki' });
  return { private: Buffer.from(privateKey), public: Buffer.from(spki.subarray(X25519_SPKI_PREFIX_LENGTH)) };
}

/** Deterministic key pair derived from a seed and a label, so restarts reproduce the same keys. */
export function deriveKeyPair(seed: string, label: string): KeyPair {
  const priv = createHash('sha256').update(`wa-sim:${label}:${seed}`).digest();
  return keyPairFromPrivate(priv);
}

export interface CertificateChain {
  root: KeyPair;
  intermediate: KeyPair;
  /** The server's Noise static key pair; the leaf certificate carries its public key. */
  staticKey: KeyPair;
  /** Encoded `proto.CertChain`, sent (encrypted) in the server hello. */
  encoded: Buffer;
}

const INTERMEDIATE_SERIAL = 1;
const LEAF_SERIAL = 2;
// Baileys checks intermediate.issuerSerial === WA_CERT_DETAILS.SERIAL, which is 0.
const ROOT_SERIAL = 0;

export function createCertificateChain(seed?: string): CertificateChain {
  const effectiveSeed = seed ?? randomBytes(32).toString('hex');
  const root = deriveKeyPair(effectiveSeed, 'root');
  const intermediate = deriveKeyPair(effectiveSeed, 'intermediate');
  const staticKey = deriveKeyPair(effectiveSeed, 'static');
  const now = Math.floor(Date.now() / 1000);
  const validity = { notBefore: now - 86_400, notAfter: now + 10 * 365 * 86_400 };

  const intermediateDetails = proto.CertChain.NoiseCertificate.Details.encode({
    serial: INTERMEDIATE_SERIAL,
    issuerSerial: ROOT_SERIAL,
    key: intermediate.public,
    ...validity,
  }).finish();
  const leafDetails = proto.CertChain.NoiseCertificate.Details.encode({
    serial: LEAF_SERIAL,
    issuerSerial: INTERMEDIATE_SERIAL,
    key: staticKey.public,
    ...validity,
  }).finish();

  const encoded = proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) },
    leaf: { details: leafDetails, signature: Curve.sign(intermediate.private, leafDetails) },
  }).finish();

  return { root, intermediate, staticKey, encoded: Buffer.from(encoded) };
}
