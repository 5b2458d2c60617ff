import { quietLibsignalConsole } from '@gw/wa-sim';
import type { SessionWorker } from '../src/session-worker';
import { Harness, nextPhone, waitFor } from './support/harness';
import { encryptPollVote, MessagingFixture, type SimAccount } from './support/messaging-fixtures';

jest.setTimeout(30_000);
quietLibsignalConsole();

describe('Inbound messages of a group chat (real Baileys ↔ simulator)', () => {
  const harness = new Harness();
  const fixture = new MessagingFixture(harness);
  const instanceId = 'inbound-group';
  let worker: SessionWorker;
  let me: SimAccount;
  let ana: SimAccount;
  let bruno: SimAccount;
  let group: { jid: string; subject: string };

  beforeAll(async () => {
    await harness.start();
    worker = await harness.startWorker('w-group', { leaseTtlMs: 20_000 }); // no takeover here: a long lease keeps a loaded machine from fencing the worker
    me = await fixture.account(nextPhone(), 'Loja');
    ana = await fixture.account(nextPhone(), 'Ana Souza');
    bruno = await fixture.account(nextPhone(), 'Bruno');
    await harness.newInstance(instanceId);
    await harness.pairByQr(instanceId, me.phone);
    group = await harness.control('POST', '/sim/groups', { creator: ana.phone, subject: 'Sample Group', participants: [me.phone, bruno.phone] });
  });
  afterAll(() => harness.stop());

  it('should store a member’s message in the group chat with the author’s LID and number', async () => {
    const id = await fixture.send(ana.phone, group.jid, { text: 'Oi grupo' });
    const row = await fixture.waitMessage(instanceId, id);
    expect(row).toMatchObject({
      chatId: group.jid,
      chatLid: '',
      isGroup: true,
      fromMe: false,
      sender: ana.lid,
      senderPn: ana.jid,
      senderLid: ana.lid,
      senderName: 'Ana Souza',
      messageType: 'Conversation',
      text: 'Oi grupo',
    });
    const event = await fixture.messageEvent(instanceId, id);
    expect(event.chatId).toBe(group.jid);
    expect(event.payload.message).toMatchObject({ groupName: 'Sample Group', isGroup: true, chatid: group.jid, sender_pn: ana.jid, sender_lid: ana.lid });
    expect(event.payload.chat).toMatchObject({
      wa_chatid: group.jid,
      wa_chatlid: '',
      wa_isGroup: true,
      wa_isGroup_member: true,
      wa_isGroup_admin: false,
      wa_name: 'Sample Group',
      name: 'Sample Group',
      phone: '',
      wa_unreadCount: 1,
      wa_lastMessageSender: ana.lid,
    });
  });

  it('should keep one group chat and count unread per incoming message', async () => {
    const id = await fixture.send(bruno.phone, group.jid, { text: 'Oi, Ana' });
    await fixture.waitMessage(instanceId, id);
    const chats = await fixture.query(`SELECT wa_chatid, unread_count FROM chats WHERE instance_id = $1 AND is_group`, [instanceId]);
    expect(chats).toEqual([{ wa_chatid: group.jid, unread_count: 2 }]);
    expect(await fixture.query(`SELECT jid, lid, push_name FROM contacts WHERE instance_id = $1 ORDER BY push_name`, [instanceId])).toEqual([
      { jid: ana.jid, lid: ana.lid, push_name: 'Ana Souza' },
      { jid: bruno.jid, lid: bruno.lid, push_name: 'Bruno' },
    ]);
  });

  it('should store what the instance sent to the group as fromMe with its own identities', async () => {
    const sent = await fixture.socket(worker, instanceId).sendMessage(group.jid, { text: 'Bom dia' });
    const row = await fixture.waitMessage(instanceId, sent!.key.id!);
    expect(row).toMatchObject({ fromMe: true, isGroup: true, chatId: group.jid, sender: me.lid, senderPn: me.jid, senderLid: me.lid, text: 'Bom dia' });
  });

  it('should decrypt a member’s vote on the instance’s group poll and take a reaction', async () => {
    const socket = fixture.socket(worker, instanceId);
    const poll = await socket.sendMessage(group.jid, { poll: { name: 'Reunião?', values: ['Segunda', 'Terça'], selectableCount: 2 } });
    const pollId = poll!.key.id!;
    await fixture.waitMessage(instanceId, pollId);
    const vote = encryptPollVote({
      secret: poll!.message!.messageContextInfo!.messageSecret!,
      pollId,
      creatorJid: me.lid,
      voterJid: ana.lid,
      selected: ['Segunda', 'Terça'],
    });
    const voteId = await fixture.send(ana.phone, group.jid, {
      message: {
        pollUpdateMessage: {
          pollCreationMessageKey: { remoteJid: group.jid, fromMe: false, participant: me.lid, id: pollId },
          vote,
          senderTimestampMs: Date.now(),
        },
      },
    });
    expect(await fixture.waitMessage(instanceId, voteId)).toMatchObject({
      messageType: 'PollUpdateMessage',
      type: 'poll',
      vote: 'Segunda, Terça',
      quoted: pollId,
      isGroup: true,
      senderPn: ana.jid,
    });

    const reactionId = await fixture.send(bruno.phone, group.jid, {
      message: {
        reactionMessage: { key: { remoteJid: group.jid, fromMe: false, participant: me.lid, id: pollId }, text: '👍', senderTimestampMs: Date.now() },
      },
    });
    expect(await fixture.waitMessage(instanceId, reactionId)).toMatchObject({
      type: 'reaction',
      reaction: pollId,
      text: '👍',
      sender: bruno.lid,
      senderPn: bruno.jid,
    });
  });

  it('should follow a subject change in the chat name and announce the chat', async () => {
    await harness.control('POST', `/sim/groups/${encodeURIComponent(group.jid)}/subject`, { actor: ana.phone, subject: 'Equipe Renomeada' });
    const events = await waitFor(
      () => fixture.events(instanceId, 'chats'),
      (list) => list.some((event) => event.payload.chats.some((chat: Record<string, unknown>) => chat.wa_name === 'Equipe Renomeada')),
      8_000,
      'chats event with the new subject',
    );
    const event = events.find((item) => item.payload.chats.some((chat: Record<string, unknown>) => chat.wa_name === 'Equipe Renomeada'))!;
    expect(event.payload).toMatchObject({
      EventType: 'chats',
      instanceName: `name-${instanceId}`,
      owner: me.phone,
      chats: [expect.objectContaining({ wa_chatid: group.jid, name: 'Equipe Renomeada' })],
    });
    const id = await fixture.send(ana.phone, group.jid, { text: 'novo nome' });
    await fixture.waitMessage(instanceId, id);
    expect((await fixture.messageEvent(instanceId, id)).payload.message.groupName).toBe('Equipe Renomeada');
  });
});
