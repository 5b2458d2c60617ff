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
