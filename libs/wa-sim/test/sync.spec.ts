import { proto } from '@whiskeysockets/baileys';
import type { BaileysEventMap, WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { RunningSimulator } from '../src';
import { connect, endSocket, getJson, memoryAuth, postJson, trustSimulator, waitFor, waitForClose } from './helpers';

jest.setTimeout(30_000);

const OWNER = '5511900000401';
const CONTACT = '5511988880401';

/** Pairs like helpers.pairWithQr, but listens for history before the logged-in socket opens. */
async function pairCollectingHistory(running: RunningSimulator, auth: ReturnType<typeof memoryAuth>, config: Parameters<typeof connect>[2]) {
  const first = connect(running, auth, config);
  first.ev.on('creds.update', (u) => Object.assign(auth.state.creds, u));
  const qr = await waitFor(first, 'connection.update', (u) => u.qr);
  const closed = waitForClose(first);
  await postJson(running, '/sim/scan', { phone: OWNER, qr });
  await closed;
  const sock = connect(running, auth, config);
  sock.ev.on('creds.update', (u) => Object.assign(auth.state.creds, u));
  const history = waitFor(sock, 'messaging-history.set', (h: BaileysEventMap['messaging-history.set']) => h);
  return { sock, history };
}

describe('history and app state', () => {
  let running: RunningSimulator;
  const sockets: WASocket[] = [];
  let contactLid: string;

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: OWNER, name: 'Owner' });
    contactLid = (await postJson<{ lid: string }>(running, '/sim/accounts', { phone: CONTACT, name: 'Ana' })).body.lid;
  });

  afterAll(async () => {
    sockets.forEach(endSocket);
    await running.stop();
  });

  it('should push the chosen history inline right after the first login', async () => {
    const history = [
      {
        syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
        conversations: [
          {
            id: contactLid,
            pnJid: `${CONTACT}@s.whatsapp.net`,
            name: 'Ana',
            messages: [
              {
                message: {
                  key: { remoteJid: contactLid, fromMe: false, id: 'HIST1' },
                  message: { conversation: 'old message 1' },
                  messageTimestamp: 1_700_000_000,
                },
              },
              {
                message: { key: { remoteJid: contactLid, fromMe: true, id: 'HIST2' }, message: { conversation: 'old reply' }, messageTimestamp: 1_700_000_100 },
              },
            ],
          },
        ],
        progress: 100,
      },
    ];
    expect((await postJson(running, `/sim/accounts/${OWNER}/history`, { history })).status).toBe(200);
    const auth = memoryAuth();
    const started = Date.now();
    const { sock, history: received } = await pairCollectingHistory(running, auth, { syncFullHistory: true, shouldSyncHistoryMessage: () => true });
    sockets.push(sock);
    const set = await received;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(set.chats.map((c) => c.id)).toContain(contactLid);
    expect(set.messages.map((m) => m.message?.conversation)).toEqual(expect.arrayContaining(['old message 1', 'old reply']));
    const device = await getJson<{ requireFullSync: boolean; historySyncConfig: Record<string, unknown> }>(
      running,
      `/sim/devices/${encodeURIComponent(sock.user!.id)}`,
    );
    expect(device.body.requireFullSync).toBe(true);
    expect(device.body.historySyncConfig).toMatchObject({ inlineInitialPayloadInE2EeMsg: true });
    // The app-state key came with it, so chatModify works.
    expect(auth.state.creds.myAppStateKeyId).toBeTruthy();
  });

  it('should round-trip labels through app state to other devices and to the phone', async () => {
    const [first] = sockets;
    await first.addLabel('', { id: '7', name: 'VIP', color: 3, deleted: false });
    await first.addChatLabel(`${CONTACT}@s.whatsapp.net`, '7');
    const stored = await getJson<Record<string, { mutations: Array<{ index: string[]; action: Record<string, unknown> }> }>>(
      running,
      `/sim/accounts/${OWNER}/app-state`,
    );
    const regular = stored.body.regular.mutations;
    expect(regular.find((m) => m.index[0] === 'label_edit')?.action).toMatchObject({ labelEditAction: { name: 'VIP' } });
    expect(regular.some((m) => m.index[0] === 'label_jid')).toBe(true);

    // A device linked later replays the patches during its initial sync.
    const auth = memoryAuth();
    const { sock: second } = await pairCollectingHistory(running, auth, {});
    sockets.push(second);
    const label = await waitFor(second, 'labels.edit', (l) => (l.name === 'VIP' ? l : undefined));
    expect(label.id).toBe('7');

    // The phone edits labels too; linked devices get a server_sync and resync.
    const live = waitFor(first, 'labels.edit', (l) => (l.name === 'Follow up' ? l : undefined));
    const res = await postJson(running, `/sim/accounts/${OWNER}/app-state`, { mod: { addLabel: { id: '8', name: 'Follow up', color: 1 } } });
    expect(res.status).toBe(200);
    expect((await live).id).toBe('8');
  });
  it('should keep the chat list the devices change through app state, and refuse a patch under an app-state fault', async () => {
    const [first] = sockets;
    const chat = `${CONTACT}@s.whatsapp.net`;
    const last = [{ key: { remoteJid: chat, fromMe: false, id: 'HIST1' }, messageTimestamp: 1_700_000_000 }];
    const chats = async () => (await getJson<{ chats: Array<Record<string, unknown>> }>(running, `/sim/accounts/${OWNER}/chats`)).body.chats;
    await first.chatModify({ pin: true }, chat);
    await first.chatModify({ mute: 1_900_000_000_000 }, chat);
    await first.chatModify({ markRead: false, lastMessages: last }, chat);
    expect((await chats()).find((c) => c.jid === chat)).toMatchObject({
      pinned: true,
      archived: false,
      muteEndTime: 1_900_000_000_000,
      read: false,
      deleted: false,
    });
    await first.chatModify({ archive: true, lastMessages: last }, chat);
    await first.chatModify({ mute: null }, chat);
    expect((await chats()).find((c) => c.jid === chat)).toMatchObject({ pinned: false, archived: true, muteEndTime: null });
    await first.chatModify({ delete: true, lastMessages: last }, chat);
    expect((await chats()).find((c) => c.jid === chat)).toMatchObject({ deleted: true, archived: false });

    const fault = await postJson(running, '/sim/faults', { kind: 'app-state', code: 409, device: OWNER });
    expect(fault.status).toBe(200);
    await expect(first.chatModify({ pin: true }, chat)).rejects.toMatchObject({ data: 409 });
    expect((await chats()).find((c) => c.jid === chat)).toMatchObject({ pinned: false, deleted: true });
    await first.chatModify({ pin: true }, chat);
    expect((await chats()).find((c) => c.jid === chat)).toMatchObject({ pinned: true, deleted: false });
  });
});
