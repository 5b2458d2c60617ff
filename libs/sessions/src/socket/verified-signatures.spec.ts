import { createHmac } from 'node:crypto';
import { VerifiedSignatures, verifySignature } from './verified-signatures';

describe('VerifiedSignatures', () => {
  /** A stand-in check: valid when the signature is the HMAC of the message under the key. */
  const sign = (key: Uint8Array, message: Uint8Array) => createHmac('sha256', key).update(message).digest();
  const counting = () => {
    const calls: string[] = [];
    const verify = (key: Uint8Array, message: Uint8Array, signature: Uint8Array) => {
      calls.push(Buffer.from(message).toString());
      return Buffer.compare(Buffer.from(signature), sign(key, message)) === 0;
    };
    return { calls, verify };
  };
  const key = Buffer.from('intermediate key');
  const message = Buffer.from('leaf details');
  const signature = sign(key, message);

  it('should check a valid signature once and answer it valid again, for equal bytes, without checking', () => {
    const { calls, verify } = counting();
    const remembered = new VerifiedSignatures().wrap(verify);

    expect(remembered(key, message, signature)).toBe(true);
    expect(remembered(new Uint8Array(key), Buffer.from('leaf details'), new Uint8Array(signature))).toBe(true);

    expect(calls).toHaveLength(1);
  });

  it('should check anything else — another message, signature or key — and never remember an invalid one', () => {
    const { calls, verify } = counting();
    const remembered = new VerifiedSignatures().wrap(verify);
    const forged = Buffer.from(signature);
    forged[10] ^= 1;
    remembered(key, message, signature);

    expect(remembered(key, Buffer.from('other details'), signature)).toBe(false);
    expect(remembered(key, message, forged)).toBe(false);
    expect(remembered(key, message, forged)).toBe(false);
    expect(remembered(Buffer.from('another key'), message, signature)).toBe(false);

    expect(calls).toHaveLength(5);
  });

  it('should keep only the newest valid signatures, up to its limit', () => {
    const { calls, verify } = counting();
    const remembered = new VerifiedSignatures(2).wrap(verify);
    const messages = ['a', 'b', 'c'].map((text) => Buffer.from(text));

    for (const data of messages) remembered(key, data, sign(key, data));
    remembered(key, messages[2], sign(key, messages[2]));
    remembered(key, messages[0], sign(key, messages[0]));

    expect(calls).toEqual(['a', 'b', 'c', 'a']);
  });
});

describe('verifySignature', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { curve } = require('libsignal') as {
    curve: { generateKeyPair(): { pubKey: Buffer; privKey: Buffer }; calculateSignature(privateKey: Buffer, message: Buffer): Buffer };
  };
  const pair = curve.generateKeyPair();
  const message = Buffer.from('the server certificate details');
  const signature = curve.calculateSignature(pair.privKey, message);
  // Baileys' keys are the 32 bytes without libsignal's 0x05 type prefix.
  const publicKey = pair.pubKey.subarray(1);

  it('should accept a valid signature', () => {
    expect(verifySignature(publicKey, message, signature)).toBe(true);
  });

  it('should refuse a signature that does not match (Baileys rc14 accepted any well-formed one)', () => {
    const forged = Buffer.from(signature);
    forged[7] ^= 1;
    expect(verifySignature(publicKey, message, forged)).toBe(false);
    expect(verifySignature(publicKey, Buffer.from('other details'), signature)).toBe(false);
  });

  it('should refuse malformed input without throwing', () => {
    expect(verifySignature(publicKey, message, Buffer.alloc(10))).toBe(false);
  });
});
