import { quietLibsignalConsole } from '@gw/wa-sim';
import { EntityManager } from 'typeorm';
import type { SessionWorker } from '../src/session-worker';
import type { WAMessage } from '../src/baileys';
import { Harness, nextPhone, waitFor } from './support/harness';
import { MessagingFixture, type SimAccount } from './support/messaging-fixtures';

jest.setTimeout(60_000);
quietLibsignalConsole();

const CHATS = 4;
const PER_CHAT = 75;
const MESSAGES = CHATS * PER_CHAT;

/** A history chunk as Baileys emits it: PER_CHAT messages in each of CHATS 1:1 chats, received and sent alternately. */
function chunk(prefix: string): { messages: WAMessage[]; chats: unknown[]; contacts: unknown[]; syncType: number; progress: number; isLatest: boolean } {
  const messages: WAMessage[] = [];
  const start = Math.floor(Date.now() / 1000) - 86_400;
  for (let chat = 0; chat < CHATS; chat++) {
    const pn = `55219${String(7_000_000 + chat).padStart(8, '0')}@s.whatsapp.net`;
    const lid = `${90_000_000_000 + chat}@lid`;
    for (let n = 0; n < PER_CHAT; n++) {
      const fromMe = n % 2 === 1;
      messages.push({
        key: { remoteJid: lid, remoteJidAlt: pn, fromMe, id: `${prefix}${chat}X${n}` },
        message: { conversation: `message ${n} of chat ${chat}` },
        messageTimestamp: start + chat * 1_000 + n,
        pushName: fromMe ? undefined : `Friend ${chat}`,
        ...(fromMe ? { status: 3 } : {}),
      } as unknown as WAMessage);
    }
  }
  return { messages, chats: [], contacts: [], syncType: 2, progress: 50, isLatest: false };
}

describe('A history chunk is written set-oriented (issue #38)', () => {
  const harness = new Harness();
  const fixture = new MessagingFixture(harness);
  const instanceId = 'history-chunk';
  let worker: SessionWorker;
  let me: SimAccount;

  beforeAll(async () => {
    await harness.start();
    worker = await harness.startWorker('w-history-chunk', { leaseTtlMs: 20_000 });
    me = await fixture.account(nextPhone(), 'Gateway Owner');
    await harness.newInstance(instanceId);
    await harness.pairByQr(instanceId, me.phone);
  });
  afterAll(() => harness.stop());

  const historyEvents = () => fixture.events(instanceId, 'history').then((events) => events.filter((event) => event.payload.syncType === '2'));
  const stored = () =>
    fixture
      .query<{ n: number }>(`SELECT count(*)::int AS n FROM messages WHERE instance_id = $1 AND message_id LIKE 'HC%'`, [instanceId])
      .then((rows) => rows[0].n);

  it('should store every message of a chunk and its history event in a few statements, not a few per message', async () => {
    // Let the pairing's own writes settle, so the count below is the chunk's.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const query = jest.spyOn(EntityManager.prototype, 'query');
    try {
      fixture.socket(worker, instanceId).ev.emit('messaging-history.set', chunk('HC') as never);
      const events = await waitFor(historyEvents, (list) => list.length === 1, 30_000, 'history event');
      const statements = query.mock.calls.length;
      process.stdout.write(`history chunk of ${MESSAGES} messages in ${CHATS} chats: ${statements} statements through EntityManager.query\n`);
      expect(await stored()).toBe(MESSAGES);
      expect(events[0].payload.messages.map((message: { messageid: string }) => message.messageid)).toEqual(
        chunk('HC').messages.map((message) => message.key.id),
      );
      expect(events[0].payload.messages[0]).toMatchObject({ text: 'message 0 of chat 0', fromMe: false, senderName: 'Friend 0' });
      // One path per message was 4–6 statements each (over 1,200 here); set-oriented it is a few for the chunk (8 when written).
      expect(statements).toBeLessThan(MESSAGES / 10);
    } finally {
      query.mockRestore();
    }
    const chats = await fixture.query<{ wa_chatid: string; unread_count: number; last_message_text_vote: string; wa_name: string }>(
      `SELECT wa_chatid, unread_count, last_message_text_vote, wa_name FROM chats WHERE instance_id = $1 AND wa_chatid LIKE '55219%' ORDER BY wa_chatid`,
      [instanceId],
    );
    expect(chats).toHaveLength(CHATS);
    for (const [index, chat] of chats.entries()) {
      // Received messages count as unread, as one observation per message counted them; the newest is the last.
      expect(chat).toMatchObject({
        unread_count: Math.ceil(PER_CHAT / 2),
        last_message_text_vote: `message ${PER_CHAT - 1} of chat ${index}`,
        wa_name: `Friend ${index}`,
      });
    }
    const contacts = await fixture.query<{ n: number }>(`SELECT count(*)::int AS n FROM contacts WHERE instance_id = $1 AND jid LIKE '55219%'`, [instanceId]);
    expect(contacts[0].n).toBe(CHATS);
  });

  it('should store nothing twice when the chunk comes again, and name every message in its event again', async () => {
    const before = await fixture.query(`SELECT message_id, id, status FROM messages WHERE instance_id = $1 AND message_id LIKE 'HC%' ORDER BY message_id`, [
      instanceId,
    ]);
    fixture.socket(worker, instanceId).ev.emit('messaging-history.set', chunk('HC') as never);
    const events = await waitFor(historyEvents, (list) => list.length === 2, 30_000, 'second history event');
    expect(await stored()).toBe(MESSAGES);
    const after = await fixture.query(`SELECT message_id, id, status FROM messages WHERE instance_id = $1 AND message_id LIKE 'HC%' ORDER BY message_id`, [
      instanceId,
    ]);
    expect(after).toEqual(before);
    expect(events[1].payload.messages.map((message: { id: string }) => message.id)).toEqual(
      events[0].payload.messages.map((message: { id: string }) => message.id),
    );
    const unread = await fixture.query<{ unread_count: number }>(`SELECT unread_count FROM chats WHERE instance_id = $1 AND wa_chatid LIKE '55219%'`, [
      instanceId,
    ]);
    expect(unread.map((chat) => chat.unread_count)).toEqual(new Array(CHATS).fill(Math.ceil(PER_CHAT / 2)));
  });

  it('should store our own message of a chunk with the read receipt that came before it, and announce it so', async () => {
    const sent = chunk('HR');
    const ours = sent.messages.find((message) => message.key.fromMe)!;
    const socket = fixture.socket(worker, instanceId);
    // The phone's read receipt of one of our messages, before the history that carries the message.
    socket.ev.emit('messages.update', [{ key: ours.key, update: { status: 4, messageTimestamp: ours.messageTimestamp } }] as never);
    await new Promise((resolve) => setTimeout(resolve, 500));
    socket.ev.emit('messaging-history.set', sent as never);
    const events = await waitFor(historyEvents, (list) => list.length === 3, 30_000, 'third history event');
    const rows = await fixture.query<{ message_id: string; status: string }>(
      `SELECT message_id, status FROM messages WHERE instance_id = $1 AND message_id LIKE 'HR%' AND from_me ORDER BY message_id`,
      [instanceId],
    );
    expect(rows).toHaveLength(sent.messages.filter((message) => message.key.fromMe).length);
    // The receipted one is Read; the others as the chunk said (Delivered: status 3).
    expect(rows.filter((row) => row.status === 'Read').map((row) => row.message_id)).toEqual([ours.key.id]);
    expect(new Set(rows.filter((row) => row.message_id !== ours.key.id).map((row) => row.status))).toEqual(new Set(['Delivered']));
    const announced = events[2].payload.messages.find((message: { messageid: string }) => message.messageid === ours.key.id);
    expect(announced).toMatchObject({ status: 'Read' });
  });
});
