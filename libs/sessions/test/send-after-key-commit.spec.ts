import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import pino from 'pino';
import {
  BufferJSON,
  initAuthCreds,
  makeWASocket,
  proto,
  WA_CERT_DETAILS,
  type AuthenticationCreds,
  type SignalDataSet,
  type SignalDataTypeMap,
  type WASocket,
} from '../src/baileys';
import { nextPhone } from './support/harness';

jest.setTimeout(60_000);

const silent = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A Signal key store standing for the database: what `set()` wrote is what a worker taking the instance over
 * would load. Each worker gets a view of it (`worker()`); `hold()` makes its later `set()` calls wait (a slow
 * commit), and `die()` fails them, and every one after, without writing anything: the process was killed before
 * its commit landed (Baileys' commit retries must not land it afterwards either).
 */
class DurableKeys {
  readonly stored = new Map<string, string>();

  worker() {
    let held: Promise<void> | undefined;
    let kill!: () => void;
    let dead = false;
    const view = {
      /** set() calls waiting on the hold. */
      waiting: 0,
      hold: () => {
        held = new Promise<void>((resolve) => (kill = resolve));
      },
      die: () => {
        dead = true;
        kill?.();
      },
      keys: {
        get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
          const found: { [id: string]: SignalDataTypeMap[T] } = {};
          for (const id of ids) {
            const text = this.stored.get(`${type}:${id}`);
            if (text === undefined) continue;
            let value = JSON.parse(text, BufferJSON.reviver) as SignalDataTypeMap[T];
            if (type === 'app-state-sync-key') value = proto.Message.AppStateSyncKeyData.fromObject(value as object) as unknown as SignalDataTypeMap[T];
            found[id] = value;
          }
          return found;
        },
        set: async (data: SignalDataSet) => {
          if (held) {
            view.waiting++;
            await held;
            view.waiting--;
          }
          if (dead) throw new Error('the process died before the commit');
          for (const [type, entries] of Object.entries(data))
            for (const [id, value] of Object.entries(entries ?? {})) {
              if (value == null) this.stored.delete(`${type}:${id}`);
              else this.stored.set(`${type}:${id}`, JSON.stringify(value, BufferJSON.replacer));
            }
        },
      },
    };
    return view;
  }
}

type Worker = ReturnType<DurableKeys['worker']>;

async function open(running: RunningSimulator, creds: AuthenticationCreds, worker: Worker): Promise<WASocket> {
  const sock = makeWASocket({
    auth: { creds, keys: worker.keys },
    waWebSocketUrl: running.websocketUrl,
    logger: silent,
    markOnlineOnConnect: false,
    // A commit that failed is not tried for long (the dying worker's).
    transactionOpts: { maxCommitRetries: 2, delayBetweenTriesMs: 50 },
  });
  sock.ev.on('creds.update', (update) => Object.assign(creds, update));
  await new Promise<void>((resolve, reject) => {
    sock.ev.on('connection.update', (update) => {
      if (update.connection === 'open') resolve();
      if (update.connection === 'close') reject(new Error('closed before it opened'));
    });
  });
  return sock;
}

const get = async <T>(running: RunningSimulator, path: string): Promise<T> => (await fetch(`${running.controlUrl}${path}`)).json() as Promise<T>;
const post = async <T>(running: RunningSimulator, path: string, body: unknown): Promise<T> =>
  (
    await fetch(`${running.controlUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  ).json() as Promise<T>;

/** The texts the phone shows (decrypted), and how many messages it could not decrypt. */
async function phoneSees(running: RunningSimulator, phone: string): Promise<{ texts: string[]; decryptFailures: number }> {
  const inbox = await get<Array<{ message: unknown }>>(running, `/sim/accounts/${phone}/inbox`);
  const { count } = await get<{ count: number }>(running, `/sim/accounts/${phone}/decrypt-failures`);
  return { texts: inbox.map((entry) => JSON.stringify(entry.message ?? null)), decryptFailures: count };
}

describe("a sent message's stanza leaves once the Signal keys its encryption moved are stored (patches/@whiskeysockets+baileys)", () => {
  let running: RunningSimulator;

  beforeAll(async () => {
    running = await startSimulator({ wsPort: 0 });
    (WA_CERT_DETAILS as { PUBLIC_KEY: Buffer }).PUBLIC_KEY = Buffer.from(running.rootPublicKey, 'base64');
  });

  afterAll(async () => {
    await running.stop();
  });

  it('should not write a message before its key commit, so that an heir with the stored keys is understood by the peer', async () => {
    const own = nextPhone();
    const peer = nextPhone();
    await post(running, '/sim/accounts', { phone: own, name: 'Loja' });
    await post(running, '/sim/accounts', { phone: peer, name: 'Maria' });
    const provisioned = await post<{ creds: unknown }>(running, `/sim/accounts/${own}/provision`, {});
    const creds = { ...initAuthCreds(), ...JSON.parse(JSON.stringify(provisioned.creds), BufferJSON.reviver) } as AuthenticationCreds;
    const database = new DurableKeys();
    const to = `${peer}@s.whatsapp.net`;

    const dying = database.worker();
    const first = await open(running, creds, dying);
    await first.sendMessage(to, { text: 'one' });
    for (let i = 0; i < 50 && !(await phoneSees(running, peer)).texts.some((text) => text.includes('"one"')); i++) await sleep(100);
    expect((await phoneSees(running, peer)).texts.some((text) => text.includes('"one"'))).toBe(true);

    // The next send's commit is slow, and the worker is killed before it lands.
    dying.hold();
    const second = first.sendMessage(to, { text: 'two' }).catch(() => undefined);
    for (let i = 0; i < 50 && dying.waiting === 0; i++) await sleep(20);
    expect(dying.waiting).toBeGreaterThan(0);
    // Written before its commit (rc14 sends inside the key transaction), the phone would have it now.
    await sleep(500);
    expect((await phoneSees(running, peer)).texts.some((text) => text.includes('"two"'))).toBe(false);
    dying.die();
    // Terminated, not closed (a closing handshake would flush nothing more, but waits for the server).
    (first.ws as unknown as { socket: { terminate(): void } | null }).socket?.terminate();
    await second;

    // The heir loads the keys as stored: its message must be one the phone can decrypt.
    const heir = await open(running, creds, database.worker());
    await heir.sendMessage(to, { text: 'three' });
    for (let i = 0; i < 50 && !(await phoneSees(running, peer)).texts.some((text) => text.includes('"three"')); i++) await sleep(100);
    const seen = await phoneSees(running, peer);
    expect(seen.texts.some((text) => text.includes('"three"'))).toBe(true);
    expect(seen.texts.some((text) => text.includes('"two"'))).toBe(false);
    expect(seen.decryptFailures).toBe(0);
    (heir.ws as unknown as { socket: { terminate(): void } | null }).socket?.terminate();
  });
});
