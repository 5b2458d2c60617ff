import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  addTransactionCapability,
  Curve,
  DisconnectReason,
  promiseTimeout,
  DEFAULT_CONNECTION_CONFIG,
  generateSignalPubKey,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
  signedKeyPair,
} from '@whiskeysockets/baileys';

/** The installed Baileys' source file, as npm ci left it (patch-package applies patches/). */
function baileysSource(path: string): string {
  const main = createRequire(__filename).resolve('@whiskeysockets/baileys');
  return readFileSync(join(dirname(main), path), 'utf8');
}

describe('patches/@whiskeysockets+baileys', () => {
  it("should not let a new socket's first send replace working Signal sessions (ADR 0042)", () => {
    // rc14 forced a new session (a fresh pre-key bundle) with every contact a new socket's device query
    // returned: after a hand-over the heir replaced the sessions its peers were using, and bench/cluster's
    // rolling restart lost 11–45 sends to 174–735 decrypt failures at the phones. Sessions are asserted, not forced.
    const source = baileysSource('Socket/messages-send.js');
    expect(source).toContain('await assertSessions(lids, false);');
    expect(source).not.toContain('await assertSessions(lids, true);');
  });

  it('should hand the blocklist it asks for at login to the app, which would otherwise ask a second time', () => {
    const source = baileysSource('Socket/chats.js');
    expect(source).toContain("fetchBlocklist().then(blocklist => ev.emit('blocklist.set', { blocklist }))");
  });

  it("should count the stanzas Baileys' handlers hold, and wait on the room the app answers after each message it emits (ADR 0048)", () => {
    const source = baileysSource('Socket/messages-recv.js');
    // Offline stanzas queue in the offline node processor without bound: counted until their handler is done.
    expect(source).toContain("['message', counted(handleMessage)]");
    expect(source).toContain('stanzasInFlight++;');
    expect(source).toContain('stanzas: () => ({ inFlight: stanzasInFlight, done: stanzasDone })');
    // The next message waits for the app's room once this one is emitted (inside the message mutex).
    expect(source).toMatch(/room = deferMessageAck\(msg,[\s\S]*?await upsertMessage\(msg, [^\n]*\n\s*if \(room\)\n\s*await room;/);
  });

  it("should run what waits for a key transaction's commit after the commit landed, in order, and nothing outside one (ADR 0069)", async () => {
    const order: string[] = [];
    let landCommit!: () => void;
    const landed = new Promise<void>((resolve) => (landCommit = resolve));
    const store: SignalKeyStore = {
      get: async () => ({}),
      set: async () => {
        order.push('commit begun');
        await landed;
        order.push('commit landed');
      },
    };
    const logger = { level: 'silent', child: () => logger, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
    const keys = addTransactionCapability(store, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 1 }) as ReturnType<typeof addTransactionCapability> & {
      afterCommit(action: () => Promise<void>): boolean;
    };
    const done = keys.transaction(async () => {
      await keys.set({ session: { 'peer.0': new Uint8Array([1]) } });
      expect(keys.afterCommit(async () => void order.push('stanza written'))).toBe(true);
      expect(keys.afterCommit(async () => void order.push('second stanza written'))).toBe(true);
      order.push('work done');
    }, 'me');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual(['work done', 'commit begun']);
    landCommit();
    await done;
    expect(order).toEqual(['work done', 'commit begun', 'commit landed', 'stanza written', 'second stanza written']);
    // Outside a transaction nothing is taken: the caller writes at once.
    expect(keys.afterCommit(async () => undefined)).toBe(false);
    // relayMessage hands its stanza (and what follows it) to afterCommit.
    expect(baileysSource('Socket/messages-send.js')).toContain('if (!authState.keys.afterCommit?.(send)) {');
  });

  it('should take a chain a transaction left running for outside it once the transaction is over', async () => {
    const writes: string[] = [];
    const store: SignalKeyStore = {
      get: async () => ({}),
      set: async (data) => void writes.push(...Object.values(data).flatMap((entries) => Object.keys(entries ?? {}))),
    };
    const logger = { level: 'silent', child: () => logger, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
    const keys = addTransactionCapability(store, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 1 }) as ReturnType<typeof addTransactionCapability> & {
      afterCommit(action: () => Promise<void>): boolean;
    };
    let leftRunning!: Promise<{ inTransaction: boolean; taken: boolean }>;
    let release!: () => void;
    const later = new Promise<void>((resolve) => (release = resolve));
    await keys.transaction(async () => {
      await keys.set({ session: { 'peer.0': new Uint8Array([1]) } });
      // Fire-and-forget (as rc14's tc-token issuance after a send): it goes on after the commit.
      leftRunning = (async () => {
        await later;
        await keys.set({ tctoken: { 'peer.1': { token: Buffer.from('t'), timestamp: '1' } } });
        return { inTransaction: keys.isInTransaction(), taken: keys.afterCommit(async () => undefined) };
      })();
    }, 'me');
    expect(writes).toEqual(['peer.0']);
    release();
    // Written at once (upstream: into the committed transaction's mutations, never stored), and nothing queued
    // on the finished transaction (a message relayed from there would never leave).
    expect(await leftRunning).toEqual({ inTransaction: false, taken: false });
    expect(writes).toEqual(['peer.0', 'peer.1']);
  });

  it('should time a promise out as before, formatting its stack only when the timeout fires', async () => {
    // Every frame sent and every query goes through promiseTimeout: rc14 formatted a stack for each, and a
    // second one and a Boom for the delay it cancelled (~4 % of a session worker's CPU in bench/send).
    await expect(promiseTimeout(1_000, (resolve: (value: string) => void) => resolve('answered'))).resolves.toBe('answered');
    await expect(promiseTimeout(1_000, (_resolve: (value: string) => void, reject: (error: Error) => void) => reject(new Error('refused')))).rejects.toThrow(
      'refused',
    );
    const timedOut = await promiseTimeout(20, () => undefined).then(
      () => null,
      (error: { message: string; output: { statusCode: number }; data: { stack: string } }) => error,
    );
    expect(timedOut?.message).toBe('Timed Out');
    expect(timedOut?.output.statusCode).toBe(DisconnectReason.timedOut);
    // The caller's stack, as before: where the wait began.
    expect(timedOut?.data.stack).toContain('baileys-patch.spec');
    expect(baileysSource('Utils/generics.js')).toContain('const trace = new Error();');
  });

  it("should keep a socket's Noise keys and leftovers in memory of their own, not in slices of the shared Buffer pool", () => {
    // A socket keeps its Noise key pair, its intro header and its last frame's leftover for its life: as 32-byte
    // slices of Node's Buffer pool they kept whole pool slabs alive (bench/instances: ours 19-20 KB of ArrayBuffers
    // per idle connected instance, 10 KB after; 211-216 KB per instance in all, 201-202 after).
    const pair = Curve.generateKeyPair();
    expect([pair.private.length, pair.public.length]).toEqual([32, 32]);
    expect([pair.private.buffer.byteLength, pair.public.buffer.byteLength]).toEqual([32, 32]);
    // Still the pair: the public key is the private key's.
    const other = Curve.generateKeyPair();
    expect(Curve.sharedKey(pair.private, other.public).equals(Curve.sharedKey(other.private, pair.public))).toBe(true);
    const noise = baileysSource('Utils/noise-handler.js');
    expect(noise).toContain('inBytes = inBytes.length === size + 3 ? EMPTY_BYTES : inBytes.subarray(size + 3);');
    expect(noise).toContain('introHeader = Buffer.allocUnsafeSlow(NOISE_HEADER.length);');
  });

  it("should encrypt in the caller's key transaction while another socket's job for the same address runs", async () => {
    // patches/libsignal+6.0.0.patch (queue_job.js). libsignal queues the session jobs of an address in one queue for the whole process, and ran each in the
    // async context of the call that started the queue: another socket's, when two sockets wrote to one contact
    // at once. Baileys finds a key transaction through that context, so the job read this socket's keys
    // outside its transaction and missed the session just made there: "No sessions", then "All encryptions
    // failed" (two instances' first sends to one contact, worker-rebalance.e2e, concurrent-first-send.e2e).
    const peer = '5511987654321@s.whatsapp.net';
    const a = signalSocket(50);
    const b = signalSocket(0);
    await a.repository.injectE2ESession({ jid: peer, session: peerBundle() });
    const data = Buffer.from('hello');
    let injected!: () => void;
    // Started outside b's transaction (a promise reaction runs in the context `then` was called in).
    const aSends = new Promise<void>((resolve) => (injected = resolve)).then(() => a.repository.encryptMessage({ jid: peer, data }));
    const bSends = b.keys.transaction(async () => {
      // The queue of the peer's address is idle: b's new session is made in b's transaction, not stored yet.
      await b.repository.injectE2ESession({ jid: peer, session: peerBundle() });
      injected();
      // a's job holds the queue (its store answers slowly): b's is queued behind it.
      await new Promise((resolve) => setTimeout(resolve, 10));
      return b.repository.encryptMessage({ jid: peer, data });
    }, 'b');
    await expect(aSends).resolves.toMatchObject({ type: 'pkmsg' });
    await expect(bSends).resolves.toMatchObject({ type: 'pkmsg' });
    // Committed with b's transaction.
    expect(b.stored('session')).toHaveLength(1);
  });
});

describe('patches/libsignal+6.0.0.patch: XEdDSA signatures checked by Node (curve.js)', () => {
  type Check = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;
  const load = createRequire(createRequire(__filename).resolve('libsignal'));
  const curve = load('./src/curve.js') as {
    verifySignature: Check;
    verifyXEdDSA?: Check;
    signXEdDSA?: (privateKey: Buffer, message: Buffer) => Buffer;
    calculateSignature(privateKey: Buffer, message: Buffer): Buffer;
    generateKeyPair(): { pubKey: Buffer; privKey: Buffer };
  };
  // The pure JavaScript libsignal used before the patch, as the reference.
  const reference = load('curve25519-js') as { verify: Check; sign(privateKey: Uint8Array, message: Uint8Array): Uint8Array };
  const pureJs = reference.verify;
  const hex = (text: string) => Buffer.from(text, 'hex');

  it("should accept libsignal-protocol-c's signature test vector and refuse it altered", () => {
    // libsignal-protocol-c, tests/test_curve25519.c (test_curve25519_signature): Alice's identity key signs her ephemeral key.
    const identity = hex('05ab7e717d4a163b7d9a1d8071dfe9dcf8cdcd1cea3339b6356be84d887e322c64');
    const ephemeral = hex('05edce9d9c415ca78cb7252e72c2c4a554d3eb29485a0e1d503118d1a82d99fb4a');
    const signature = hex('5de88ca9a89b4a115da79109c67c9c7464a3e4180274f1cb8c63c2984e286dfbede82deb9dcd9fae0bfbb821569b3d9001bd8130cd11d486cef047bd60b86e88');
    expect(curve.verifyXEdDSA).toBeInstanceOf(Function);
    expect(curve.verifySignature(identity, ephemeral, signature)).toBe(true);
    for (const byte of [0, 31, 32, 63]) {
      const altered = Buffer.from(signature);
      altered[byte] ^= 1;
      expect(curve.verifySignature(identity, ephemeral, altered)).toBe(false);
    }
  });

  it('should answer as curve25519-js for signatures made by libsignal, and for each of them altered', () => {
    const verdicts: Array<[boolean, boolean]> = [];
    for (let round = 0; round < 8; round++) {
      const { pubKey, privKey } = curve.generateKeyPair();
      const key = pubKey.subarray(1);
      const message = randomBytes(1 + round * 31);
      const signature = curve.calculateSignature(privKey, message);
      const flip = (bytes: Buffer, index: number, bit: number) => {
        const copy = Buffer.from(bytes);
        copy[index] ^= bit;
        return copy;
      };
      const cases: Array<[Buffer, Buffer, Buffer]> = [
        [key, message, signature],
        [key, flip(message, 0, 1), signature],
        [key, message, flip(signature, round % 64, 4)],
        // The sign bit kept in the signature's last byte, and the key's top bit (ignored by X25519's encoding).
        [key, message, flip(signature, 63, 0x80)],
        [flip(key, round % 31, 2), message, signature],
        [flip(key, 31, 0x80), message, signature],
      ];
      for (const [k, m, s] of cases) verdicts.push([curve.verifyXEdDSA!(k, m, s), pureJs(k, m, s)]);
    }
    expect(verdicts.filter(([ours, reference]) => ours !== reference)).toEqual([]);
    // Each round: the signature and the one with the top bit of its key flipped pass, the four others fail.
    expect(verdicts.filter(([ours]) => ours)).toHaveLength(16);
  });

  it('should sign as curve25519-js did, byte for byte, and what it signs should pass both checks', () => {
    expect(curve.signXEdDSA).toBeInstanceOf(Function);
    const { pubKey, privKey } = curve.generateKeyPair();
    for (let round = 0; round < 6; round++) {
      // A new key each time but the last two (the second signs from the kept Edwards key).
      const key = round < 4 ? curve.generateKeyPair() : { pubKey, privKey };
      const message = randomBytes(round * 40);
      const signature = curve.calculateSignature(key.privKey, message);
      expect(signature.toString('hex')).toBe(Buffer.from(reference.sign(key.privKey, message)).toString('hex'));
      expect(curve.verifySignature(key.pubKey, message, signature)).toBe(true);
      expect(pureJs(key.pubKey.subarray(1), message, signature)).toBe(true);
    }
  });

  it('should refuse a signature whose S was made larger by the group order, which curve25519-js accepted', () => {
    // Not a signature a signer makes (S is always reduced); a copy of a valid one altered by someone else.
    // libsignal's own checks (Rust's curve25519-dalek, the C library's XEdDSA) refuse it too.
    const { pubKey, privKey } = curve.generateKeyPair();
    const message = Buffer.from('sender key message');
    const signature = curve.calculateSignature(privKey, message);
    const order = (1n << 252n) + 27742317777372353535851937790883648493n;
    const sPart = Buffer.from(signature.subarray(32));
    const signBit = sPart[31] & 0x80;
    sPart[31] &= 0x7f;
    const larger = BigInt(`0x${Buffer.from(sPart).reverse().toString('hex')}`) + order;
    const widened = Buffer.from(larger.toString(16).padStart(64, '0'), 'hex').reverse();
    widened[31] |= signBit;
    const malleated = Buffer.concat([signature.subarray(0, 32), widened]);

    expect(pureJs(pubKey.subarray(1), message, malleated)).toBe(true);
    expect(curve.verifySignature(pubKey, message, malleated)).toBe(false);
    expect(curve.verifySignature(pubKey, message, signature)).toBe(true);
  });
});

/** A socket's Signal repository over a key store in memory whose reads take `readMs`, with Baileys' transactions. */
function signalSocket(readMs: number) {
  const data = new Map<string, unknown>();
  const store: SignalKeyStore = {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      if (readMs) await new Promise((resolve) => setTimeout(resolve, readMs));
      const found: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) if (data.has(`${type}:${id}`)) found[id] = data.get(`${type}:${id}`) as SignalDataTypeMap[T];
      return found;
    },
    async set(set: SignalDataSet) {
      for (const [type, values] of Object.entries(set))
        for (const [id, value] of Object.entries(values ?? {})) {
          if (value === null || value === undefined) data.delete(`${type}:${id}`);
          else data.set(`${type}:${id}`, value);
        }
    },
  };
  const logger = { level: 'silent', child: () => logger, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
  const keys = addTransactionCapability(store, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
  const identity = Curve.generateKeyPair();
  const creds = { signedIdentityKey: identity, signedPreKey: signedKeyPair(identity, 1), registrationId: 1 };
  const repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds, keys }, logger);
  return { keys, repository, stored: (type: string) => [...data.keys()].filter((key) => key.startsWith(`${type}:`)) };
}

/** A fresh pre-key bundle of a peer device, as the server hands it out. */
function peerBundle() {
  const identity = Curve.generateKeyPair();
  const signed = signedKeyPair(identity, 1);
  const preKey = Curve.generateKeyPair();
  return {
    registrationId: 7,
    identityKey: generateSignalPubKey(identity.public),
    signedPreKey: { keyId: 1, publicKey: generateSignalPubKey(signed.keyPair.public), signature: signed.signature },
    preKey: { keyId: 1, publicKey: generateSignalPubKey(preKey.public) },
  };
}
