import {
  addTransactionCapability,
  Curve,
  DEFAULT_CONNECTION_CONFIG,
  signedKeyPair,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';
import pino from 'pino';

/** A Map-backed key store, as Baileys expects (`null` deletes). */
class MemoryKeys implements SignalKeyStore {
  readonly data = new Map<string, unknown>();
  get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]): { [id: string]: SignalDataTypeMap[T] } {
    const out: { [id: string]: SignalDataTypeMap[T] } = {};
    for (const id of ids) {
      const value = this.data.get(`${type}:${id}`);
      if (value !== undefined) out[id] = value as SignalDataTypeMap[T];
    }
    return out;
  }
  set(data: SignalDataSet): void {
    for (const [type, entries] of Object.entries(data)) {
      for (const [id, value] of Object.entries(entries ?? {})) {
        if (value === null || value === undefined) this.data.delete(`${type}:${id}`);
        else this.data.set(`${type}:${id}`, value);
      }
    }
  }
  /** The sender-key states stored: each one's chain iteration and the skipped message keys it keeps. */
  senderKeyStates(): Array<{ iteration: number; kept: number[] }> {
    const states: Array<{ iteration: number; kept: number[] }> = [];
    for (const [key, value] of this.data) {
      if (!key.startsWith('sender-key:')) continue;
      const record = JSON.parse(Buffer.from(value as Uint8Array).toString('utf8')) as Array<{
        senderChainKey: { iteration: number };
        senderMessageKeys: Array<{ iteration: number }>;
      }>;
      for (const state of record) states.push({ iteration: state.senderChainKey.iteration, kept: state.senderMessageKeys.map((k) => k.iteration) });
    }
    return states;
  }
}

const logger = pino({ level: 'silent' });

/** What encryptGroupMessage answers. */
type Sent = { ciphertext: Uint8Array; senderKeyDistributionMessage: Uint8Array };

function device() {
  const identity = Curve.generateKeyPair();
  const keys = new MemoryKeys();
  const creds = { signedIdentityKey: identity, signedPreKey: signedKeyPair(identity, 1), registrationId: 1234 };
  const repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository(
    { creds, keys: addTransactionCapability(keys, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 10 }) } as never,
    logger,
  );
  return { keys, repository };
}

/**
 * ADR 0050. A sender key's chain gives one message key per message, in order (libsignal-protocol-java,
 * whatsmeow's libsignal: encrypt with the chain's current key, then step once). Baileys rc14 asked for
 * `iteration + 1` after the first message: every group send skipped a key and kept it in the sender's own
 * record (up to 2,000), and every receiver stored a key for each iteration it would never see. Our patch
 * (patches/@whiskeysockets+baileys+*.patch) encrypts as libsignal does and drops what rc14 left behind.
 */
describe('patches/@whiskeysockets+baileys: group messages use their sender key chain in order (ADR 0050)', () => {
  const group = '120363000000000001@g.us';
  const author = '5511900000001:0@s.whatsapp.net';

  it('sends iterations 0, 1, 2, … and neither side keeps a skipped key', async () => {
    const sender = device();
    const receiver = device();
    const texts = ['one', 'two', 'three', 'four', 'five'];
    const sent: Sent[] = [];
    for (const text of texts) sent.push(await sender.repository.encryptGroupMessage({ group, meId: author, data: Buffer.from(text) }));
    await receiver.repository.processSenderKeyDistributionMessage({
      authorJid: author,
      item: { groupId: group, axolotlSenderKeyDistributionMessage: sent[0].senderKeyDistributionMessage },
    });
    const received: string[] = [];
    for (const message of sent)
      received.push(Buffer.from(await receiver.repository.decryptGroupMessage({ group, authorJid: author, msg: message.ciphertext })).toString());
    expect(received).toEqual(texts);

    // Five messages moved each chain five steps, none skipped (rc14: sender at 9 keeping 1, 3, 5, 7; receiver likewise).
    expect(sender.keys.senderKeyStates()).toEqual([{ iteration: 5, kept: [] }]);
    expect(receiver.keys.senderKeyStates()).toEqual([{ iteration: 5, kept: [] }]);
  });

  it('still reads messages that arrive out of order (the receiver keeps the keys it skipped, and only those)', async () => {
    const sender = device();
    const receiver = device();
    const sent: Sent[] = [];
    for (const text of ['a', 'b', 'c']) sent.push(await sender.repository.encryptGroupMessage({ group, meId: author, data: Buffer.from(text) }));
    await receiver.repository.processSenderKeyDistributionMessage({
      authorJid: author,
      item: { groupId: group, axolotlSenderKeyDistributionMessage: sent[0].senderKeyDistributionMessage },
    });
    const read = async (index: number) =>
      Buffer.from(await receiver.repository.decryptGroupMessage({ group, authorJid: author, msg: sent[index].ciphertext })).toString();
    expect(await read(2)).toBe('c');
    expect(receiver.keys.senderKeyStates()).toEqual([{ iteration: 3, kept: [0, 1] }]);
    expect(await read(0)).toBe('a');
    expect(await read(1)).toBe('b');
    expect(receiver.keys.senderKeyStates()).toEqual([{ iteration: 3, kept: [] }]);
  });

  it("drops the skipped keys rc14's sends left in our own record, and goes on from where its chain is", async () => {
    const sender = device();
    const receiver = device();
    const first = await sender.repository.encryptGroupMessage({ group, meId: author, data: Buffer.from('first') });
    // Our own record as rc14 left it after more sends: the chain at 7, keys 1, 3, 5 kept.
    const [key] = [...sender.keys.data.keys()].filter((k) => k.startsWith('sender-key:'));
    const record = JSON.parse(Buffer.from(sender.keys.data.get(key) as Uint8Array).toString('utf8')) as Array<Record<string, unknown>>;
    const chain = record[0].senderChainKey as { iteration: number; seed: unknown };
    expect(chain.iteration).toBe(1);
    record[0].senderMessageKeys = [1, 3, 5].map((iteration) => ({ iteration, seed: chain.seed }));
    sender.keys.data.set(key, Buffer.from(JSON.stringify(record), 'utf8'));

    const next = await sender.repository.encryptGroupMessage({ group, meId: author, data: Buffer.from('next') });
    expect(sender.keys.senderKeyStates()).toEqual([{ iteration: 2, kept: [] }]);
    // A receiver that got the first message reads the next one.
    await receiver.repository.processSenderKeyDistributionMessage({
      authorJid: author,
      item: { groupId: group, axolotlSenderKeyDistributionMessage: first.senderKeyDistributionMessage },
    });
    for (const [message, text] of [
      [first, 'first'],
      [next, 'next'],
    ] as const) {
      expect(Buffer.from(await receiver.repository.decryptGroupMessage({ group, authorJid: author, msg: message.ciphertext })).toString()).toBe(text);
    }
  });
});
