// A full Signal stack for one simulated primary device (a phone), built on Baileys' own
// libsignal repository so wire formats match what the real client expects.
import { addTransactionCapability, Curve, makeSignalRepository, unpadRandomMax16 } from './baileys';
import type { ILogger, KeyPair, SignalDataSet, SignalDataTypeMap, SignalKeyStore, SignalRepositoryWithLIDStore } from './baileys';
import { randomInt } from 'crypto';
import type { BinaryNode } from './node-io';
import { child, childBytes, readUIntBE } from './node-io';

export interface SignedPreKeyPublic {
  keyId: number;
  publicKey: Buffer;
  signature: Buffer;
}

/** Public key material of a device, as the server hands it out in `<iq xmlns=encrypt><key>`. */
export interface PreKeyBundle {
  registrationId: number;
  identityKey: Buffer;
  signedPreKey: SignedPreKeyPublic;
  preKey?: { keyId: number; publicKey: Buffer };
}

const KEY_TYPE_PREFIX = Buffer.from([5]);
const withKeyType = (key: Uint8Array): Buffer => (key.length === 33 ? Buffer.from(key) : Buffer.concat([KEY_TYPE_PREFIX, key]));

/** Map-backed SignalKeyStore; `null` deletes, as Baileys expects. */
export class MemoryKeyStore implements SignalKeyStore {
  private readonly data = new Map<string, unknown>();

  get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]): { [id: string]: SignalDataTypeMap[T] } {
    const out: { [id: string]: SignalDataTypeMap[T] } = {};
    for (const id of ids) {
      const value = this.data.get(`${type}:${id}`);
      if (value !== undefined) {
        out[id] = value as SignalDataTypeMap[T];
      }
    }
    return out;
  }

  set(data: SignalDataSet): void {
    for (const [type, entries] of Object.entries(data)) {
      for (const [id, value] of Object.entries(entries ?? {})) {
        if (value === null || value === undefined) {
          this.data.delete(`${type}:${id}`);
        } else {
          this.data.set(`${type}:${id}`, value);
        }
      }
    }
  }

  clear(): void {
    this.data.clear();
  }

  /** Every stored record as `[type:id, value]`, for persisting the simulator's state. */
  entries(): Array<[string, unknown]> {
    return [...this.data.entries()];
  }

  load(entries: Array<[string, unknown]>): void {
    for (const [key, value] of entries) this.data.set(key, value);
  }
}

/** What a phone's Signal stack needs to survive a simulator restart (Buffers stay Buffers). */
export interface SignalDeviceState {
  identity: KeyPair;
  registrationId: number;
  signedPreKey: { keyId: number; keyPair: KeyPair; signature: Buffer };
  nextPreKeyId: number;
  /** Sessions, one-time prekeys, sender keys, identities, LID mappings… as `[type:id, value]`. */
  keys: Array<[string, unknown]>;
}

export class SignalDevice {
  readonly identity: KeyPair;
  readonly registrationId: number;
  readonly signedPreKey: { keyId: number; keyPair: KeyPair; signature: Buffer };
  readonly repository: SignalRepositoryWithLIDStore;
  private readonly keys = new MemoryKeyStore();
  private nextPreKeyId = 1;

  constructor(logger: ILogger, restored?: SignalDeviceState) {
    if (restored) {
      this.identity = restored.identity;
      this.registrationId = restored.registrationId;
      this.signedPreKey = restored.signedPreKey;
      this.nextPreKeyId = restored.nextPreKeyId;
      this.keys.load(restored.keys);
    } else {
      this.identity = Curve.generateKeyPair();
      this.registrationId = randomInt(1, 16380);
      const spk = Curve.generateKeyPair();
      this.signedPreKey = {
        keyId: 1,
        keyPair: spk,
        signature: Buffer.from(Curve.sign(this.identity.private, withKeyType(spk.public))),
      };
    }
    const creds = {
      signedIdentityKey: this.identity,
      signedPreKey: this.signedPreKey,
      registrationId: this.registrationId,
    };
    const keys = addTransactionCapability(this.keys, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 10 });
    this.repository = makeSignalRepository({ creds, keys }, logger);
  }

  toState(): SignalDeviceState {
    return {
      identity: this.identity,
      registrationId: this.registrationId,
      signedPreKey: this.signedPreKey,
      nextPreKeyId: this.nextPreKeyId,
      keys: this.keys.entries(),
    };
  }

  /** Our public bundle; each call mints a fresh one-time prekey (the server consumes one per fetch). */
  bundle(withOneTimeKey = true): PreKeyBundle {
    const bundle: PreKeyBundle = {
      registrationId: this.registrationId,
      identityKey: Buffer.from(this.identity.public),
      signedPreKey: {
        keyId: this.signedPreKey.keyId,
        publicKey: Buffer.from(this.signedPreKey.keyPair.public),
        signature: this.signedPreKey.signature,
      },
    };
    if (withOneTimeKey) {
      const keyId = this.nextPreKeyId++;
      const pair = Curve.generateKeyPair();
      this.keys.set({ 'pre-key': { [String(keyId)]: pair } });
      bundle.preKey = { keyId, publicKey: Buffer.from(pair.public) };
    }
    return bundle;
  }

  async hasSession(jid: string): Promise<boolean> {
    return (await this.repository.validateSession(jid)).exists;
  }

  async injectSession(jid: string, bundle: PreKeyBundle): Promise<void> {
    await this.repository.injectE2ESession({
      jid,
      session: {
        registrationId: bundle.registrationId,
        identityKey: withKeyType(bundle.identityKey),
        signedPreKey: {
          keyId: bundle.signedPreKey.keyId,
          publicKey: withKeyType(bundle.signedPreKey.publicKey),
          signature: bundle.signedPreKey.signature,
        },
        // libsignal accepts a missing one-time prekey; the .d.ts marks it required.
        preKey: (bundle.preKey ? { keyId: bundle.preKey.keyId, publicKey: withKeyType(bundle.preKey.publicKey) } : undefined) as unknown as {
          keyId: number;
          publicKey: Uint8Array;
        },
      },
    });
  }

  async deleteSession(jid: string): Promise<void> {
    await this.repository.deleteSession([jid]);
  }

  async encrypt(jid: string, paddedPlaintext: Uint8Array): Promise<{ type: 'pkmsg' | 'msg'; ciphertext: Buffer }> {
    const { type, ciphertext } = await this.repository.encryptMessage({ jid, data: paddedPlaintext });
    return { type, ciphertext: Buffer.from(ciphertext) };
  }

  /** Decrypts a pkmsg/msg and strips the random padding. */
  async decrypt(jid: string, type: 'pkmsg' | 'msg', ciphertext: Uint8Array): Promise<Buffer> {
    const padded = await this.repository.decryptMessage({ jid, type, ciphertext });
    return Buffer.from(unpadRandomMax16(padded));
  }

  async encryptGroup(group: string, meId: string, paddedPlaintext: Uint8Array): Promise<{ ciphertext: Buffer; senderKeyDistributionMessage: Buffer }> {
    const result = await this.repository.encryptGroupMessage({ group, meId, data: paddedPlaintext });
    return { ciphertext: Buffer.from(result.ciphertext), senderKeyDistributionMessage: Buffer.from(result.senderKeyDistributionMessage) };
  }

  async processSenderKeyDistribution(authorJid: string, groupId: string, skdm: Uint8Array): Promise<void> {
    await this.repository.processSenderKeyDistributionMessage({
      authorJid,
      item: { groupId, axolotlSenderKeyDistributionMessage: skdm },
    });
  }

  async decryptGroup(group: string, authorJid: string, ciphertext: Uint8Array): Promise<Buffer> {
    const padded = await this.repository.decryptGroupMessage({ group, authorJid, msg: ciphertext });
    return Buffer.from(unpadRandomMax16(padded));
  }

  close(): void {
    this.repository.close?.();
    this.keys.clear();
  }
}

/** Session bundle from a retry receipt's `<keys>` (the requester's fresh keys). */
export function bundleFromRetryKeys(receipt: BinaryNode, keys: BinaryNode): PreKeyBundle | undefined {
  const registrationId = readUIntBE(childBytes(receipt, 'registration'));
  const identityKey = childBytes(keys, 'identity');
  const skey = child(keys, 'skey');
  const key = child(keys, 'key');
  const skeyId = readUIntBE(childBytes(skey, 'id'));
  const skeyValue = childBytes(skey, 'value');
  const skeySignature = childBytes(skey, 'signature');
  if (registrationId === undefined || !identityKey || skeyId === undefined || !skeyValue || !skeySignature) {
    return undefined;
  }
  const bundle: PreKeyBundle = {
    registrationId,
    identityKey,
    signedPreKey: { keyId: skeyId, publicKey: skeyValue, signature: skeySignature },
  };
  const keyId = readUIntBE(childBytes(key, 'id'));
  const keyValue = childBytes(key, 'value');
  if (keyId !== undefined && keyValue) bundle.preKey = { keyId, publicKey: keyValue };
  return bundle;
}
