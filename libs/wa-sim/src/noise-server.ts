// Server side of WhatsApp's Noise_XX_25519_AESGCM_SHA256 handshake, mirroring Baileys'
// client (lib/Utils/noise-handler.js) step by step, plus the 3-byte length framing.
import { createHash } from 'crypto';
import { aesDecryptGCM, aesEncryptGCM, Curve, hkdf, NOISE_MODE, proto } from './baileys';
import type { KeyPair } from './baileys';
import type { CertificateChain } from './certs';

export const NOISE_WA_HEADER = Buffer.from([0x57, 0x41, 6, 3]);
const EDGE_ROUTING_PREFIX = Buffer.from('ED', 'utf-8');

function sha256(...parts: Uint8Array[]): Buffer {
  const hash = createHash('sha256');
  for (const p of parts) {
    hash.update(p);
  }
  return hash.digest();
}

function ivFor(counter: number): Buffer {
  const iv = Buffer.alloc(12);
  iv.writeUInt32BE(counter, 8);
  return iv;
}

function hkdf64(ikm: Uint8Array, salt: Uint8Array): [Buffer, Buffer] {
  const out = Buffer.from(hkdf(Buffer.from(ikm), 64, { salt: Buffer.from(salt), info: '' }));
  return [out.subarray(0, 32), out.subarray(32)];
}

/** Symmetric state during the handshake (h, ck, k, n in Noise terms). */
class HandshakeState {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;

  constructor() {
    const mode = Buffer.from(NOISE_MODE, 'utf-8');
    this.hash = mode.length === 32 ? mode : sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
  }

  authenticate(data: Uint8Array): void {
    this.hash = sha256(this.hash, data);
  }

  mixIntoKey(ikm: Uint8Array): void {
    const [salt, key] = hkdf64(ikm, this.salt);
    this.salt = salt;
    this.key = key;
    this.counter = 0;
  }

  encrypt(plaintext: Uint8Array): Buffer {
    const result = aesEncryptGCM(plaintext, this.key, ivFor(this.counter++), this.hash);
    this.authenticate(result);
    return result;
  }

  decrypt(ciphertext: Uint8Array): Buffer {
    const result = aesDecryptGCM(ciphertext, this.key, ivFor(this.counter++), this.hash);
    this.authenticate(ciphertext);
    return result;
  }

  /** Split into transport keys: the client writes with [0:32] and reads with [32:64]. */
  split(): { readKey: Buffer; writeKey: Buffer } {
    const [clientWrite, clientRead] = hkdf64(new Uint8Array(0), this.salt);
    return { readKey: clientWrite, writeKey: clientRead };
  }
}

export class TransportCipher {
  private readCounter = 0;
  private writeCounter = 0;

  constructor(
    private readonly readKey: Buffer,
    private readonly writeKey: Buffer,
  ) {}

  encrypt(plaintext: Uint8Array): Buffer {
    return aesEncryptGCM(plaintext, this.writeKey, ivFor(this.writeCounter++), Buffer.alloc(0));
  }

  decrypt(ciphertext: Uint8Array): Buffer {
    return aesDecryptGCM(ciphertext, this.readKey, ivFor(this.readCounter++), Buffer.alloc(0));
  }
}

export interface ClientFinish {
  /** The client's Noise static public key (Baileys' `creds.noiseKey.public`). */
  clientStatic: Buffer;
  payload: proto.ClientPayload;
  transport: TransportCipher;
}

/**
 * Drives one server-side handshake. `onClientHello` returns the server hello bytes to frame and
 * send; `onClientFinish` yields the client's static key, its ClientPayload and the transport cipher.
 */
export class NoiseServerHandshake {
  private readonly state = new HandshakeState();
  private readonly ephemeral: KeyPair = Curve.generateKeyPair();

  constructor(private readonly certs: CertificateChain) {
    this.state.authenticate(NOISE_WA_HEADER);
  }

  onClientHello(frame: Buffer): Buffer {
    const hello = proto.HandshakeMessage.decode(frame).clientHello;
    if (!hello?.ephemeral || hello.ephemeral.length !== 32) {
      throw new Error('invalid client hello');
    }
    const clientEphemeral = Buffer.from(hello.ephemeral);
    this.state.authenticate(clientEphemeral);
    this.state.authenticate(this.ephemeral.public);
    this.state.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientEphemeral));
    const encStatic = this.state.encrypt(this.certs.staticKey.public);
    this.state.mixIntoKey(Curve.sharedKey(this.certs.staticKey.private, clientEphemeral));
    const encPayload = this.state.encrypt(this.certs.encoded);
    return Buffer.from(
      proto.HandshakeMessage.encode({
        serverHello: { ephemeral: this.ephemeral.public, static: encStatic, payload: encPayload },
      }).finish(),
    );
  }

  onClientFinish(frame: Buffer): ClientFinish {
    const finish = proto.HandshakeMessage.decode(frame).clientFinish;
    if (!finish?.static || !finish.payload) {
      throw new Error('invalid client finish');
    }
    const clientStatic = this.state.decrypt(finish.static);
    this.state.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientStatic));
    const payloadBytes = this.state.decrypt(finish.payload);
    const { readKey, writeKey } = this.state.split();
    return {
      clientStatic,
      payload: proto.ClientPayload.decode(payloadBytes),
      transport: new TransportCipher(readKey, writeKey),
    };
  }
}

/**
 * Splits the inbound byte stream into frames. The very first bytes carry the intro header
 * ("WA\x06\x03", optionally preceded by an "ED" edge-routing block), then 3-byte big-endian
 * length-prefixed frames follow.
 */
export class FrameReader {
  private buffer: Buffer = Buffer.alloc(0);
  private sawIntro = false;

  push(data: Buffer): Buffer[] {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, data]) : data;
    if (!this.sawIntro) {
      if (!this.consumeIntro()) {
        return [];
      }
    }
    const frames: Buffer[] = [];
    while (this.buffer.length >= 3) {
      const size = (this.buffer[0] << 16) | (this.buffer[1] << 8) | this.buffer[2];
      if (this.buffer.length < size + 3) {
        break;
      }
      frames.push(Buffer.from(this.buffer.subarray(3, size + 3)));
      this.buffer = this.buffer.subarray(size + 3);
    }
    return frames;
  }

  private consumeIntro(): boolean {
    let offset = 0;
    if (this.buffer.length >= 2 && this.buffer.subarray(0, 2).equals(EDGE_ROUTING_PREFIX)) {
      if (this.buffer.length < 7) {
        return false;
      }
      const routingLength = (this.buffer[4] << 16) | this.buffer.readUInt16BE(5);
      offset = 7 + routingLength;
    }
    if (this.buffer.length < offset + NOISE_WA_HEADER.length) {
      return false;
    }
    if (!this.buffer.subarray(offset, offset + NOISE_WA_HEADER.length).equals(NOISE_WA_HEADER)) {
      throw new Error('bad noise intro header');
    }
    this.buffer = this.buffer.subarray(offset + NOISE_WA_HEADER.length);
    this.sawIntro = true;
    return true;
  }
}

export function encodeFrame(payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(payload.length + 3);
  frame[0] = (payload.length >>> 16) & 0xff;
  frame[1] = (payload.length >>> 8) & 0xff;
  frame[2] = payload.length & 0xff;
  frame.set(payload, 3);
  return frame;
}
