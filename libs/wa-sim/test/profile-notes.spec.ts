import { proto } from '@whiskeysockets/baileys';
import type { WASocket } from '@whiskeysockets/baileys';
import sharp from 'sharp';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { startSimulator, WaSimulator } from '../src';
import type { RunningSimulator } from '../src';
import { endSocket, getJson, memoryAuth, pairWithQr, postJson, sleep, trustSimulator, waitFor } from './helpers';

jest.setTimeout(40_000);

const OWNER = '5511900000911';
const FRIEND = '5511988880911';

/** Resolves once `check` holds (polled), or fails naming `what`. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 300)}`);
    await sleep(100);
  }
}

describe('profile and chat notes (Baileys against the simulator)', () => {
  let running: RunningSimulator;
  let owner: WASocket;
  let friend: WASocket;
  const ownerJid = `${OWNER}@s.whatsapp.net`;
  const friendJid = `${FRIEND}@s.whatsapp.net`;

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: OWNER, name: 'Owner' });
    await postJson(running, '/sim/accounts', { phone: FRIEND, name: 'Friend' });
    owner = await pairWithQr(running, OWNER, memoryAuth());
    friend = await pairWithQr(running, FRIEND, memoryAuth());
    // The two talk, so the friend is told of the owner's picture changes.
    const received = waitFor(friend, 'messages.upsert', (upsert) => upsert.messages.find((message) => message.key.remoteJid && !message.key.fromMe));
    await owner.sendMessage(friendJid, { text: 'oi' });
    await received;
    await eventually(async () => owner.authState.creds.myAppStateKeyId, Boolean, 'the app-state key');
  });

  afterAll(async () => {
    endSocket(owner);
    endSocket(friend);
    await running.stop();
  });

  it('should make the push name a device sets the account’s name', async () => {
    await owner.updateProfileName('Loja do Owner');
    await eventually(
      async () => (await getJson<{ name: string }>(running, `/sim/accounts/${OWNER}`)).body.name,
      (name) => name === 'Loja do Owner',
      'the new name',
    );
  });

  it('should keep the picture a device sets, serve it to others and tell them, and remove it', async () => {
    const jpeg = await sharp({ create: { width: 640, height: 640, channels: 3, background: { r: 10, g: 20, b: 30 } } })
      .jpeg()
      .toBuffer();
    const told = waitFor(friend, 'contacts.update', (updates) => updates.find((update) => update.imgUrl === 'changed'));
    await owner.updateProfilePicture(ownerJid, jpeg);
    expect((await told)?.id).toBe(ownerJid);
    const url = await friend.profilePictureUrl(ownerJid, 'image');
    expect(url).toMatch(new RegExp(`^https://pps\\.whatsapp\\.net/.*${OWNER}_\\d+_image\\.jpg$`));
    const served = await fetch(`${running.controlUrl}/sim/accounts/${OWNER}/picture`);
    expect(served.status).toBe(200);
    expect((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).width).toBe(640);

    const removed = waitFor(friend, 'contacts.update', (updates) => updates.find((update) => update.imgUrl === 'removed'));
    await owner.removeProfilePicture(ownerJid);
    await removed;
    await expect(friend.profilePictureUrl(ownerJid, 'image')).rejects.toMatchObject({ data: 404 });
    expect((await fetch(`${running.controlUrl}/sim/accounts/${OWNER}/picture`)).status).toBe(404);
  });

  it('should keep chat notes from app state, a device’s and the phone’s alike', async () => {
    await owner.appPatch({
      type: 'regular_low',
      index: ['note_edit', 'NOTE1'],
      apiVersion: 7,
      operation: proto.SyncdMutation.SyncdOperation.SET,
      syncAction: {
        timestamp: Date.now(),
        noteEditAction: {
          type: proto.SyncActionValue.NoteEditAction.NoteType.UNSTRUCTURED,
          chatJid: friendJid,
          createdAt: 1_700_000_000_000,
          unstructuredContent: 'ligar',
        },
      },
    });
    const notes = async () => (await getJson<{ notes: Array<Record<string, unknown>> }>(running, `/sim/accounts/${OWNER}/notes`)).body.notes;
    expect(await notes()).toEqual([{ noteId: 'NOTE1', chatJid: friendJid, text: 'ligar', deleted: false, createdAt: 1_700_000_000_000 }]);
    // The phone edits that same note; the device is told to sync.
    const synced = new Promise<void>((resolve) => owner.ws.on('CB:notification,type:server_sync', () => resolve()));
    expect((await postJson(running, `/sim/accounts/${OWNER}/notes`, { chatJid: friendJid, text: 'ligar amanhã' })).body).toMatchObject({ noteId: 'NOTE1' });
    await synced;
    expect(await notes()).toEqual([expect.objectContaining({ noteId: 'NOTE1', text: 'ligar amanhã' })]);
    await postJson(running, `/sim/accounts/${OWNER}/notes`, { chatJid: friendJid, text: '' });
    expect(await notes()).toEqual([expect.objectContaining({ noteId: 'NOTE1', text: '', deleted: true })]);
  });
});

describe('ProfileStore with a stateDir', () => {
  it('should keep the accounts’ pictures across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wa-sim-profile-'));
    try {
      const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } } })
        .jpeg()
        .toBuffer();
      const first = new WaSimulator({ stateDir: dir, media: false });
      first.createAccount({ phone: '5511900000912', name: 'Com foto' });
      const set = first.phoneState.setProfilePicture('5511900000912', jpeg);
      await first.stop();
      const second = new WaSimulator({ stateDir: dir, media: false });
      try {
        expect(second.phoneState.profilePicture('5511900000912')).toEqual({ id: set?.id, bytes: jpeg, t: set?.t });
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
