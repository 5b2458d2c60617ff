import { quietLibsignalConsole } from '@gw/wa-sim';
import { Harness, nextPhone, waitFor } from './support/harness';
import { MessagingFixture, type SimAccount } from './support/messaging-fixtures';

jest.setTimeout(90_000);
quietLibsignalConsole();

/**
 * A reconnect's offline flood of group messages: the first one's store asks WhatsApp for the group's
 * name (a reconnect forgets what the worker knew). Baileys' decrypts wait for room in the socket's queue
 * (ADR 0048), the queue waits for the store, and the answer is a frame behind the flood: the store waited
 * until the query timed out (3 s), and every group message of the next 30 s went out without its group's
 * name (bench/inbound: a 2.6 s stall in every run). A write no longer waits for an answer while its socket
 * is not being read (answerWhileRead), and an unanswered group's name is the one its chat stored.
 */
describe('An offline flood whose store would ask WhatsApp something: no write waits for an answer behind the flood', () => {
  const harness = new Harness();
  const fixture = new MessagingFixture(harness);
  const instanceId = 'flood-query';
  const SOCKET_MAX = 8;
  let me: SimAccount;
  let ana: SimAccount;
  let bruno: SimAccount;
  let group: { jid: string; subject: string };

  beforeAll(async () => {
    await harness.start();
    await harness.startWorker('w-flood-1', { leaseTtlMs: 20_000, inboundQueueMax: SOCKET_MAX });
    me = await fixture.account(nextPhone(), 'Loja');
    ana = await fixture.account(nextPhone(), 'Ana');
    bruno = await fixture.account(nextPhone(), 'Bruno');
    await harness.newInstance(instanceId);
    await harness.pairByQr(instanceId, me.phone);
    group = await harness.control('POST', '/sim/groups', { creator: ana.phone, subject: 'Flood Group', participants: [me.phone, bruno.phone] });
    // Both members' sender keys reach the instance once, while it is online.
    for (const member of [ana, bruno]) await fixture.waitMessage(instanceId, await fixture.send(member.phone, group.jid, { text: `oi de ${member.phone}` }));
  }, 90_000);
  afterAll(() => harness.stop());

  it('should store every message of the flood with its group name, once', async () => {
    await harness.stopWorkers();
    const ids: string[] = [];
    for (let n = 0; n < 60; n++) ids.push(await fixture.send((n % 2 ? bruno : ana).phone, group.jid, { text: `flood ${n}` }));

    await harness.startWorker('w-flood-2', { leaseTtlMs: 20_000, inboundQueueMax: SOCKET_MAX });
    await waitFor(
      () => fixture.query(`SELECT count(*)::int AS n FROM messages WHERE instance_id = $1 AND message_id = ANY($2)`, [instanceId, ids]),
      (rows) => (rows[0] as { n: number }).n === ids.length,
      60_000,
      'the flood stored',
    );
    const events = (await fixture.events(instanceId, 'messages')).filter((event) =>
      ids.includes(String((event.payload.message as { messageid?: string }).messageid)),
    );
    expect(events).toHaveLength(ids.length);
    expect(events.map((event) => (event.payload.message as { groupName?: string }).groupName)).toEqual(ids.map(() => 'Flood Group'));
  });

  it("should store a note the phone wrote while the instance was away, read beside the flood's queue", async () => {
    await harness.stopWorkers();
    // The phone's app state changes (a chat note): WhatsApp tells the linked device to pull it (server_sync).
    await harness.control('POST', `/sim/accounts/${me.phone}/notes`, { chatJid: group.jid, text: 'Ligar amanhã' });
    const ids: string[] = [];
    for (let n = 0; n < 60; n++) ids.push(await fixture.send((n % 2 ? bruno : ana).phone, group.jid, { text: `depois ${n}` }));

    await harness.startWorker('w-flood-3', { leaseTtlMs: 20_000, inboundQueueMax: SOCKET_MAX, queryTimeoutMs: 60_000 });
    // Inside the socket's queue, the notes' read waited for an answer behind the flood: every message behind it
    // waited with it, until the query timed out (Baileys' 60 s, as deployed; the flood not stored after 60 s).
    await waitFor(
      () => fixture.query(`SELECT notes FROM chats WHERE instance_id = $1 AND wa_chatid = $2`, [instanceId, group.jid]),
      (rows) => (rows[0] as { notes?: string } | undefined)?.notes === 'Ligar amanhã',
      30_000,
      'the note stored',
    );
    await waitFor(
      () => fixture.query(`SELECT count(*)::int AS n FROM messages WHERE instance_id = $1 AND message_id = ANY($2)`, [instanceId, ids]),
      (rows) => (rows[0] as { n: number }).n === ids.length,
      30_000,
      'the flood stored',
    );
  });
});
