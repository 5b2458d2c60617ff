import { mkdtempSync, readdirSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type { WAMessage, WASocket } from '@whiskeysockets/baileys';
import { startSimulator, WaSimulator } from '../src';
import type { InboxEntry, RunningSimulator } from '../src';
import { encodeState, readStateFile, STATE_FILE_NAME } from '../src/state-store';
import type { SimState } from '../src/state-store';
import { connect, endSocket, getJson, memoryAuth, pairWithQr, postJson, sleep, trustSimulator, waitFor, waitForConnection } from './helpers';

jest.setTimeout(60_000);

const GATEWAY = '5511900000701';
const CONTACT = '5511988880701';

/** The state as text, without the save time. */
function comparable(state: SimState): string {
  return encodeState({ ...state, savedAt: '' });
}

async function waitForInbox(running: RunningSimulator, phone: string, predicate: (e: InboxEntry) => boolean, timeoutMs = 8_000): Promise<InboxEntry> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { body } = await getJson<InboxEntry[]>(running, `/sim/accounts/${phone}/inbox?waitMs=500`);
    const hit = body.find(predicate);
    if (hit) return hit;
  }
  throw new Error('inbox entry not found');
}

/** One message from the simulated phone to the device and one back. */
async function roundTrip(running: RunningSimulator, sock: WASocket, tag: string): Promise<void> {
  const received = waitFor(sock, 'messages.upsert', ({ messages }: { messages: WAMessage[] }) =>
    messages.find((m) => m.message?.conversation === `from phone ${tag}`),
  );
  const sent = await postJson<{ id: string }>(running, `/sim/accounts/${CONTACT}/send`, { to: GATEWAY, text: `from phone ${tag}` });
  expect(sent.status).toBe(200);
  const msg = await received;
  expect(msg.key.id).toBe(sent.body.id);
  await sock.sendMessage(`${CONTACT}@s.whatsapp.net`, { text: `from device ${tag}` });
  const entry = await waitForInbox(running, CONTACT, (e) => JSON.stringify(e.message).includes(`from device ${tag}`));
  expect(entry.from).toBe(`${GATEWAY}@s.whatsapp.net`);
  expect(entry.decryptError).toBeUndefined();
}

describe('stateDir: the state file', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'wa-sim-state-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('should write the root key at once and round-trip everything it saved', async () => {
    const first = new WaSimulator({ stateDir: dir, media: false });
    expect(readStateFile(dir)?.rootPublicKey).toBe(first.rootPublicKey);
    first.createAccount({ phone: GATEWAY, name: 'Gateway' });
    first.createAccount({ phone: CONTACT, name: 'Rita', business: true });
    const { device } = first.provisionDevice(GATEWAY, undefined, { pushName: 'GW' });
    first.phoneState.setBlocked(GATEWAY, CONTACT, true);
    first.phoneState.setStatusPrivacy(CONTACT, 'whitelist', [`${GATEWAY}@s.whatsapp.net`]);
    first.phoneState.archiveMessages(CONTACT, [
      { key: { remoteJid: `${GATEWAY}@s.whatsapp.net`, fromMe: false, id: 'OLD1' }, message: { conversation: 'old' }, messageTimestamp: 1_700_000_000 },
    ]);
    const group = first.groups.create(first.registry.get(GATEWAY)!, 'Team', [first.registry.get(CONTACT)!]);
    // The contact's phone has a Signal stack and a session with the device.
    await first.sendMessage(CONTACT, GATEWAY, { text: 'queued while offline' });
    await first.settle();
    const before = first.snapshotState();
    await first.stop();

    const saved = readStateFile(dir)!;
    expect(comparable(saved)).toBe(comparable(before));
    expect(readdirSync(dir)).toEqual([STATE_FILE_NAME]);
    expect(saved.accounts.map((a) => a.phone).sort()).toEqual([CONTACT, GATEWAY].sort());
    const gateway = saved.accounts.find((a) => a.phone === GATEWAY)!;
    expect(Buffer.isBuffer(gateway.devices[0].noiseKey)).toBe(true);
    // Offline queue: the phone's message waits for the device.
    expect(gateway.devices[0].pending.length).toBeGreaterThan(0);
    expect(saved.accounts.find((a) => a.phone === CONTACT)!.signal?.keys.some(([key]) => key.startsWith('session:'))).toBe(true);

    const second = new WaSimulator({ stateDir: dir, media: false });
    try {
      expect(second.rootPublicKey).toBe(first.rootPublicKey);
      expect(comparable(second.snapshotState())).toBe(comparable(before));
      expect(second.getDevice(device.jid)).toMatchObject({ jid: device.jid, lid: device.lid, pushName: 'GW', pairingMethod: 'provisioned' });
      expect(second.getAccount(CONTACT)).toMatchObject({ name: 'Rita', business: true });
      expect(second.phoneState.blocklist(GATEWAY)).toEqual([second.getAccount(CONTACT).lid]);
      expect(second.groups.get(group.jid)?.subject).toBe('Team');
      // New accounts keep getting LIDs from the same salt, and device ids continue.
      expect(second.provisionDevice(GATEWAY).device.deviceId).toBe(device.deviceId + 1);
    } finally {
      await second.stop();
    }
  });

  it('should keep the saved root key over a configured seed, and change nothing without a stateDir', async () => {
    const first = new WaSimulator({ stateDir: dir, media: false, rootKeySeed: 'one' });
    await first.stop();
    const second = new WaSimulator({ stateDir: dir, media: false, rootKeySeed: 'two' });
    expect(second.rootPublicKey).toBe(first.rootPublicKey);
    await second.stop();
    const plain = new WaSimulator({ media: false });
    await plain.stop();
    expect(plain.rootPublicKey).not.toBe(first.rootPublicKey);
    expect(readdirSync(dir)).toEqual([STATE_FILE_NAME]);
  });
});

describe('stateDir: a paired Baileys session survives a simulator restart', () => {
  let dir: string;
  let running: RunningSimulator | undefined;
  const sockets: WASocket[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wa-sim-state-'));
  });

  afterAll(async () => {
    sockets.forEach(endSocket);
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should log the same auth state back in without a QR and exchange messages both ways', async () => {
    running = await startSimulator({ stateDir: dir, autoCreateAccounts: true });
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: GATEWAY, name: 'Gateway' });
    await postJson(running, '/sim/accounts', { phone: CONTACT, name: 'Rita' });
    const auth = memoryAuth();
    const sock = await pairWithQr(running, GATEWAY, auth);
    sockets.push(sock);
    await roundTrip(running, sock, 'before');
    const rootPublicKey = running.rootPublicKey;
    const deviceJid = sock.user!.id;
    // Saved as it changes (debounced), not only on stop: a killed sandbox keeps its pairing.
    await sleep(500);
    const saved = readStateFile(dir)!.accounts.find((a) => a.phone === GATEWAY)!;
    expect(saved.devices.map((d) => `${GATEWAY}:${d.deviceId}@s.whatsapp.net`)).toEqual([deviceJid]);
    expect(saved.devices[0].keys.preKeys.length).toBeGreaterThan(0);

    endSocket(sock);
    await running.stop();
    running = undefined;
    await sleep(100);

    running = await startSimulator({ stateDir: dir, autoCreateAccounts: true });
    // The gateway keeps trusting the key it was given before.
    expect(running.rootPublicKey).toBe(rootPublicKey);
    trustSimulator(running);
    const device = await getJson<{ jid: string; status: string; connected: boolean }>(running, `/sim/devices/${encodeURIComponent(deviceJid)}`);
    expect(device.body).toMatchObject({ jid: deviceJid, status: 'active', connected: false });

    const next = connect(running, auth);
    sockets.push(next);
    next.ev.on('creds.update', (update) => Object.assign(auth.state.creds, update));
    let qrShown = false;
    next.ev.on('connection.update', (update) => {
      if (update.qr) qrShown = true;
    });
    const opened = await waitForConnection(next, (u) => u.connection === 'open' || u.connection === 'close', 15_000);
    expect(opened.connection).toBe('open');
    expect(qrShown).toBe(false);
    expect(next.user?.id).toBe(deviceJid);
    // The phone that signed the device's identity is the same phone (not a fresh Signal identity).
    const sim = running.sim;
    const gatewayAccount = sim.registry.get(GATEWAY)!;
    expect(Buffer.from(gatewayAccount.signal.identity.public).equals(Buffer.from(auth.state.creds.account!.accountSignatureKey!))).toBe(true);
    await roundTrip(running, next, 'after');
    // Twice, so a ratcheted session (not just a fresh pkmsg) works too.
    await roundTrip(running, next, 'after again');
    // The sessions carried over: no phone needed a retry to read what the device sent
    // (Baileys would paper over lost sessions with retry receipts and new pkmsgs).
    await sim.settle();
    expect(sim.phoneOf(sim.registry.get(CONTACT)!).decryptFailures).toBe(0);
    expect(sim.phoneOf(gatewayAccount).decryptFailures).toBe(0);
  });
});
