import type { WAMessage, WASocket } from '@whiskeysockets/baileys';
import { proto } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { PeerRequestRecord, RunningSimulator } from '../src';
import { endSocket, getJson, memoryAuth, pairWithQr, postJson, trustSimulator, waitFor } from './helpers';

jest.setTimeout(30_000);

const OWNER = '5511900000401';
const FRIEND = '5511988880401';

/** History on demand and placeholder resends: the companion asks its phone, the phone answers from what it keeps. */
describe('peer data operations (history on demand, placeholder resend)', () => {
  let running: RunningSimulator;
  let sock: WASocket;
  let friendLid: string;
  const base = Math.floor(Date.now() / 1000) - 30 * 86_400;
  const archived = (id: string, offsetSeconds: number, text: string, fromMe = false) => ({
    key: { remoteJid: friendLid, fromMe, id },
    message: { conversation: text },
    messageTimestamp: base + offsetSeconds,
  });

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: OWNER, name: 'Loja' });
    friendLid = (await postJson<{ lid: string }>(running, '/sim/accounts', { phone: FRIEND, name: 'Ana' })).body.lid;
    sock = await pairWithQr(running, OWNER, memoryAuth());
    const { status, body } = await postJson(running, `/sim/accounts/${OWNER}/archive`, {
      messages: [archived('OLD1', 10, 'first'), archived('OLD2', 20, 'second', true), archived('OLD3', 30, 'third'), archived('ANCHOR', 40, 'anchor')],
    });
    expect(status).toBe(200);
    expect(body).toEqual({ archived: 4 });
  });

  afterAll(async () => {
    endSocket(sock);
    await running.stop();
  });

  it('should answer fetchMessageHistory with an ON_DEMAND chunk of the newest messages older than the anchor', async () => {
    const history = waitFor(sock, 'messaging-history.set', (set) => (set.syncType === proto.HistorySync.HistorySyncType.ON_DEMAND ? set : undefined));
    const requestId = await sock.fetchMessageHistory(2, { remoteJid: friendLid, fromMe: false, id: 'ANCHOR' }, (base + 40) * 1000);
    const set = await history;
    expect(set.peerDataRequestSessionId).toBe(requestId);
    expect(set.messages.map((message: WAMessage) => message.key.id)).toEqual(['OLD2', 'OLD3']);
    expect(set.messages[0]).toMatchObject({ key: { fromMe: true }, message: { conversation: 'second' } });

    const { body } = await getJson<PeerRequestRecord[]>(running, `/sim/accounts/${OWNER}/peer-requests`);
    const record = body.find((entry) => entry.id === requestId)!;
    expect(record).toMatchObject({ type: 'HISTORY_SYNC_ON_DEMAND', answered: ['OLD2', 'OLD3'] });
    expect(record.request).toMatchObject({ historySyncOnDemandRequest: { chatJid: friendLid, oldestMsgId: 'ANCHOR', onDemandMsgCount: 2 } });
  });

  it('should answer an empty chunk when nothing older is kept', async () => {
    const history = waitFor(sock, 'messaging-history.set', (set) => (set.syncType === proto.HistorySync.HistorySyncType.ON_DEMAND ? set : undefined));
    await sock.fetchMessageHistory(10, { remoteJid: friendLid, fromMe: false, id: 'OLD1' }, (base + 10) * 1000);
    expect((await history).messages).toEqual([]);
  });

  it('should resend a kept message on a placeholder resend request', async () => {
    const upsert = waitFor(sock, 'messages.upsert', (event) => event.messages.find((message) => message.key.id === 'OLD3') && event);
    const requestId = await sock.requestPlaceholderResend({ remoteJid: friendLid, fromMe: false, id: 'OLD3' });
    // (Baileys' event buffer drops the upsert's requestId when it consolidates; the peer-request log ties them.)
    const event = await upsert;
    expect(event.messages.find((message) => message.key.id === 'OLD3')!.message).toMatchObject({ conversation: 'third' });
    const { body } = await getJson<PeerRequestRecord[]>(running, `/sim/accounts/${OWNER}/peer-requests`);
    expect(body.find((entry) => entry.id === requestId)).toMatchObject({ type: 'PLACEHOLDER_MESSAGE_RESEND', answered: ['OLD3'] });
  });

  it('should refuse an archive that is not a list of WebMessageInfo', async () => {
    expect((await postJson(running, `/sim/accounts/${OWNER}/archive`, { messages: 'x' })).status).toBe(400);
    expect((await postJson(running, `/sim/accounts/${OWNER}/archive`, { messages: [{ message: { conversation: 'no key' } }] })).status).toBe(400);
    expect((await postJson(running, `/sim/accounts/5500000000000/archive`, { messages: [] })).status).toBe(404);
  });
});
