import type { WASocket } from '@whiskeysockets/baileys';
import { startSimulator } from '../src';
import type { InboxEntry, PostedStatus, RunningSimulator } from '../src';
import { endSocket, getJson, memoryAuth, pairWithQr, postJson, trustSimulator } from './helpers';

jest.setTimeout(30_000);

const OWNER = '5511900000301';
const FRIEND = '5511988880301';
const COLLEAGUE = '5511988880302';
const STRANGER = '5511988880303';

async function inboxOf(running: RunningSimulator, phone: string, waitMs = 500): Promise<InboxEntry[]> {
  return (await getJson<InboxEntry[]>(running, `/sim/accounts/${phone}/inbox?waitMs=${waitMs}`)).body;
}

async function waitForInbox(running: RunningSimulator, phone: string, predicate: (e: InboxEntry) => boolean, timeoutMs = 10_000): Promise<InboxEntry> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const hit = (await inboxOf(running, phone)).find(predicate);
    if (hit) return hit;
  }
  throw new Error(`no matching inbox entry at ${phone}`);
}

describe('status broadcasts (stories)', () => {
  let running: RunningSimulator;
  let sock: WASocket;

  beforeAll(async () => {
    running = await startSimulator();
    trustSimulator(running);
    await postJson(running, '/sim/accounts', { phone: OWNER, name: 'Loja' });
    for (const phone of [FRIEND, COLLEAGUE, STRANGER]) await postJson(running, '/sim/accounts', { phone });
    sock = await pairWithQr(running, OWNER, memoryAuth());
  });

  afterAll(async () => {
    endSocket(sock);
    await running.stop();
  });

  it('should deliver a text status to the phones of statusJidList only, with its colour and font', async () => {
    const sent = await sock.sendMessage(
      'status@broadcast',
      { text: 'Promoção de hoje' },
      {
        statusJidList: [`${FRIEND}@s.whatsapp.net`, `${COLLEAGUE}@s.whatsapp.net`],
        backgroundColor: '#FF0000',
        font: 2,
      },
    );
    const id = sent!.key.id!;
    for (const phone of [FRIEND, COLLEAGUE]) {
      const entry = await waitForInbox(running, phone, (e) => e.id === id);
      expect(entry).toMatchObject({ to: 'status@broadcast', from: `${OWNER}@s.whatsapp.net`, participant: `${OWNER}@s.whatsapp.net` });
      expect(entry.message).toMatchObject({ extendedTextMessage: { text: 'Promoção de hoje', font: 'FB_SCRIPT', backgroundArgb: 0xffff0000 } });
    }
    expect((await inboxOf(running, STRANGER, 0)).some((e) => e.id === id)).toBe(false);

    const { status, body } = await getJson<PostedStatus[]>(running, `/sim/accounts/${OWNER}/statuses`);
    expect(status).toBe(200);
    const posted = body.find((entry) => entry.id === id)!;
    expect(posted.recipients.sort()).toEqual([FRIEND, COLLEAGUE].sort());
    expect(posted.recipientDevices.length).toBeGreaterThanOrEqual(2);
  });

  it('should carry a second status to a new audience (each status hands out its sender key again)', async () => {
    const sent = await sock.sendMessage('status@broadcast', { text: 'Só para você' }, { statusJidList: [`${STRANGER}@s.whatsapp.net`] });
    const entry = await waitForInbox(running, STRANGER, (e) => e.id === sent!.key.id);
    expect(entry.message).toMatchObject({ extendedTextMessage: { text: 'Só para você' } });
    expect((await inboxOf(running, FRIEND, 0)).some((e) => e.id === sent!.key.id)).toBe(false);
  });

  it('should answer 404 for the statuses of an unknown account', async () => {
    expect((await getJson(running, '/sim/accounts/5500000000000/statuses')).status).toBe(404);
  });
});
