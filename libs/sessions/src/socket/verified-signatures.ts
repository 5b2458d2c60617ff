import * as libsignal from 'libsignal';
import { Curve, generateSignalPubKey } from '../baileys';

/** Signatures remembered (the newest); a server's certificate chain is two of them. */
const LIMIT = 64;

type Verify = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;

/**
 * Remembers the Curve25519 signatures Baileys found valid, so the same signature over the same bytes
 * by the same key is not checked again in pure JavaScript (issue #38).
 *
 * Why: every handshake checks the server's Noise certificate chain, two XEdDSA signatures checked by
 * curve25519-js (noise-handler processHandshake → Curve.verify), over 10 ms of CPU each. The chain is
 * the same for every handshake with a server until WhatsApp rotates it, and at a worker start, a
 * takeover or a reconnect storm hundreds of handshakes run at once: in bench/instances the checks were
 * 60 % of the worker's CPU while 200 sessions connected. Since docs/adr/0047 libsignal's check is
 * OpenSSL's (~0.1 ms, ~0.6 ms for a key not seen before); remembering still skips it. Checking a signature is a pure function of its
 * three inputs, so a valid one found again (all three byte for byte equal: the key is their bytes, not a
 * hash of them) is valid again; anything else (a new certificate, a bad signature) is checked as before,
 * and only valid ones are remembered. The answer is Baileys' own, whatever it is (rc14's Curve.verify
 * answers false only when libsignal throws, on a malformed key or signature). Other checks (pairing's ADV signatures) go through the same
 * memory; they are rare and evict nothing for long.
 */
export class VerifiedSignatures {
  private readonly valid = new Set<string>();

  constructor(private readonly limit = LIMIT) {}

  /** `verify`, remembering the signatures it found valid. */
  wrap(verify: Verify): Verify {
    return (publicKey, message, signature) => {
      const key = `${base64(publicKey)}.${base64(message)}.${base64(signature)}`;
      if (this.valid.has(key)) return true;
      const ok = verify(publicKey, message, signature);
      if (ok) this.remember(key);
      return ok;
    };
  }

  private remember(key: string): void {
    if (this.valid.size >= this.limit) this.valid.delete(this.valid.values().next().value as string);
    this.valid.add(key);
  }
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

const signal = libsignal as unknown as { curve: { verifySignature(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean } };

/**
 * A signature check that answers what the check found. Baileys rc14's `Curve.verify` calls libsignal's
 * `verifySignature` and returns true unless it throws — but libsignal answers a wrong signature with
 * `false`, not an exception, so Baileys accepted any well-formed signature: the Noise handshake's check
 * of the server's certificate chain against WhatsApp's root key (and the pairing's account signature)
 * only checked the format. Here a signature is valid only when libsignal says so.
 */
export function verifySignature(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return signal.curve.verifySignature(generateSignalPubKey(publicKey), message, signature) === true;
  } catch {
    return false;
  }
}

const installed = Symbol.for('gw.verifiedSignatures');

/** Replaces Baileys' Curve.verify (the Noise handshake's and the pairing's) once per process: checked for real, valid ones remembered. */
export function rememberVerifiedSignatures(): void {
  const curve = Curve as typeof Curve & { [installed]?: true };
  if (curve[installed]) return;
  curve.verify = new VerifiedSignatures().wrap(verifySignature);
  curve[installed] = true;
}
