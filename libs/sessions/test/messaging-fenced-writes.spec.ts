import { InProcessBus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import {
  ChatRepository,
  ContactRepository,
  FencedOutError,
  InboundGroupRepository,
  InstanceRepository,
  LeaseRepository,
  LidMappingRepository,
  MessageRepository,
  type Tx,
} from '@gw/persistence';
import { newMessageFixture, openTestDatabase, type TestDatabase } from '@gw/testing';
import pino from 'pino';
import { InboundStore } from '../src/messaging/inbound-store';
import { InboundBatch } from '../src/messaging/inbound-batch';
import { chatObservationKeys, senderObservationKeys } from '../src/messaging/inbound/inbound-context';

describe(InboundStore.name, () => {
  let db: TestDatabase;
  const bus = new InProcessBus();
  const instanceId = 'fenced-inbound';
  const notices: unknown[] = [];

  beforeAll(async () => {
    db = await openTestDatabase();
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-fenced', name: 'fenced' });
    bus.subscribe(Subjects.outbox(instanceId), async (data) => {
      notices.push(data);
    });
  });
  afterAll(async () => {
    await bus.close();
    await db.close();
  });

  /** Stores one LID pair of an instance inside the write's transaction. */
  const storePair = (tx: Tx, id: string, lid: string, pn: string) => new LidMappingRepository(db.dataSource).within(tx).store(id, [{ lid, pn }]);
  /** A statement that fails in the database (a pair of an instance that does not exist breaks its foreign key): it aborts its transaction. */
  const failingStatement = (tx: Tx) => storePair(tx, 'no-such-instance', 'bad@lid', 'bad-pn');

  /** The number a LID of an instance is stored with (null: not stored). */
  const pnOf = (id: string, lid: string) => new LidMappingRepository(db.dataSource).pnForLid(id, lid);

  const outbox = () => db.dataSource.query(`SELECT event_type, chat_id FROM outbox_events WHERE instance_id = $1 ORDER BY id`, [instanceId]);

  it('should write the change and its events together and then publish a notice', async () => {
    const lease = (await new LeaseRepository(db.dataSource).claim(instanceId, 'worker-a', 10_000))!;
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }));
    await sut.write(lease, async (tx, events) => {
      await storePair(tx, instanceId, '1@lid', '5511900000001@s.whatsapp.net');
      events.push({ eventType: 'messages', chatId: '5511900000001@s.whatsapp.net', payload: { EventType: 'messages' } });
    });
    expect(await outbox()).toEqual([{ event_type: 'messages', chat_id: '5511900000001@s.whatsapp.net' }]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The notice names the event types the commit wrote (a follower that wants none of them skips it).
    expect(notices).toEqual([{ instanceId, lastId: expect.any(String), types: ['messages'] }]);
  });

  it('should say in the notice when every messages event of the commit is of a message sent through the API (our own copies)', async () => {
    const id = 'fenced-inbound-api';
    await new InstanceRepository(db.dataSource).create({ id, token: 'tok-fenced-api', name: 'api' });
    const lease = (await new LeaseRepository(db.dataSource).claim(id, 'worker-a', 10_000))!;
    const apiNotices: unknown[] = [];
    bus.subscribe(Subjects.outbox(id), async (data) => void apiNotices.push(data));
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }));
    const copy = { eventType: 'messages', payload: { message: { fromMe: true, wasSentByApi: true } } };
    const typed = { eventType: 'messages', payload: { message: { fromMe: true, wasSentByApi: false } } };
    const receipt = { eventType: 'messages_update', payload: { state: 'Delivered' } };
    await sut.write(lease, async (_tx, events) => void events.push(copy, receipt, copy));
    await sut.write(lease, async (_tx, events) => void events.push(copy, typed));
    await sut.write(lease, async (_tx, events) => void events.push(receipt));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(apiNotices).toEqual([
      { instanceId: id, lastId: expect.any(String), types: ['messages', 'messages_update'], sentByApi: true },
      // A message typed on the phone (or received) among them: not said.
      { instanceId: id, lastId: expect.any(String), types: ['messages'] },
      // No messages event at all: the types say it.
      { instanceId: id, lastId: expect.any(String), types: ['messages_update'] },
    ]);
  });

  it('should write nothing for a worker whose lease was taken over', async () => {
    const leases = new LeaseRepository(db.dataSource);
    const stale = (await leases.holderOf(instanceId))!;
    await db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = $1`, [instanceId]);
    await leases.claim(instanceId, 'worker-b', 10_000);
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }));
    await expect(
      sut.write(stale, async (tx, events) => {
        await storePair(tx, instanceId, '2@lid', '5511900000002@s.whatsapp.net');
        events.push({ eventType: 'messages', payload: {} });
      }),
    ).rejects.toBeInstanceOf(FencedOutError);
    expect(await outbox()).toHaveLength(1);
    expect(await pnOf(instanceId, '2@lid')).toBeNull();
  });

  it('should write concurrent writes of several instances in one group transaction, each fenced by its own lease', async () => {
    const ids = ['group-inbound-a', 'group-inbound-b', 'group-inbound-stale'];
    const instances = new InstanceRepository(db.dataSource);
    for (const id of ids) await instances.create({ id, token: `tok-${id}`, name: id });
    const groupNotices: unknown[] = [];
    for (const id of ids) bus.subscribe(Subjects.outbox(id), async (data) => void groupNotices.push(data));
    const leases = new LeaseRepository(db.dataSource);
    const [a, b] = [(await leases.claim(ids[0], 'worker-a', 10_000))!, (await leases.claim(ids[1], 'worker-a', 10_000))!];
    const stale = (await leases.claim(ids[2], 'worker-a', 10_000))!;
    await db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = $1`, [ids[2]]);
    await leases.claim(ids[2], 'worker-b', 10_000);

    // One transaction in flight, so the next writes must wait and go together.
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 100, maxInFlight: 1 });
    const write = (lease: typeof a, lid: string, chat: string) =>
      sut.write(lease, async (tx, events) => {
        await storePair(tx, lease.instanceId, lid, chat);
        events.push({ eventType: 'messages', chatId: chat, payload: { lid } }, { eventType: 'messages_update', chatId: chat, payload: { lid } });
        return lid;
      });
    const results = await Promise.allSettled([
      write(a, '10@lid', '5511900000010@s.whatsapp.net'), // alone: nothing in flight yet
      write(b, '11@lid', '5511900000011@s.whatsapp.net'),
      write(stale, '12@lid', '5511900000012@s.whatsapp.net'),
      write(a, '13@lid', '5511900000013@s.whatsapp.net'),
    ]);
    expect(results.map((result) => (result.status === 'fulfilled' ? result.value : (result.reason as Error).constructor.name))).toEqual([
      '10@lid',
      '11@lid',
      'FencedOutError',
      '13@lid',
    ]);
    expect(sut.stats).toEqual({ transactions: 2, writes: 4, fallbacks: 0 });
    const rows: Array<{ instance_id: string; event_type: string; lid: string; tx: string }> = await db.dataSource.query(
      `SELECT instance_id, event_type, payload->>'lid' AS lid, tx::text AS tx FROM outbox_events WHERE instance_id LIKE 'group-inbound-%' ORDER BY id`,
    );
    // Each write's events in its order; the group's rows share one transaction.
    expect(rows.map((row) => `${row.instance_id} ${row.event_type} ${row.lid}`)).toEqual([
      'group-inbound-a messages 10@lid',
      'group-inbound-a messages_update 10@lid',
      'group-inbound-b messages 11@lid',
      'group-inbound-b messages_update 11@lid',
      'group-inbound-a messages 13@lid',
      'group-inbound-a messages_update 13@lid',
    ]);
    expect(new Set(rows.slice(2).map((row) => row.tx)).size).toBe(1);
    expect(await pnOf(ids[2], '12@lid')).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(groupNotices).toEqual(
      expect.arrayContaining([
        { instanceId: ids[0], lastId: expect.any(String), types: ['messages', 'messages_update'] },
        { instanceId: ids[1], lastId: expect.any(String), types: ['messages', 'messages_update'] },
      ]),
    );
    expect(groupNotices).toHaveLength(3);
  });

  it("should put an instance's writes that wait behind its transaction in flight together, in order, in its next one", async () => {
    const id = 'group-inbound-b';
    const lease = (await new LeaseRepository(db.dataSource).holderOf(id))!;
    const groups: Array<{ writes: number; seconds: number }> = [];
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), {
      maxBatch: 100,
      maxInFlight: 4,
      onGroup: (writes, seconds) => groups.push({ writes, seconds }),
    });
    const order: string[] = [];
    const write = (lid: string) =>
      sut.write(lease, async (tx, events) => {
        order.push(lid);
        await storePair(tx, id, lid, `${lid}-pn`);
        events.push({ eventType: 'messages', chatId: 'c', payload: { lid } });
      });
    const first = write('30@lid');
    expect(sut.pending(id)).toBe(1);
    const rest = ['31@lid', '32@lid', '33@lid'].map(write);
    expect(sut.pending(id)).toBe(4);
    expect(sut.pending()).toBe(4);
    await Promise.all([first, ...rest]);
    expect(sut.pending(id)).toBe(0);
    // Four transactions may be in flight, but this instance's three later writes waited for its first and went together.
    expect(sut.stats).toEqual({ transactions: 2, writes: 4, fallbacks: 0 });
    // What the worker's metrics observe (wa_gateway_inbound_write_group_writes and _duration_seconds).
    expect(groups.map((group) => group.writes)).toEqual([1, 3]);
    for (const { seconds } of groups) expect(seconds).toBeGreaterThan(0);
    expect(order).toEqual(['30@lid', '31@lid', '32@lid', '33@lid']);
    const rows: Array<{ lid: string; tx: string }> = await db.dataSource.query(
      `SELECT payload->>'lid' AS lid, tx::text AS tx FROM outbox_events WHERE instance_id = $1 AND payload->>'lid' LIKE '3_@lid' ORDER BY id`,
      [id],
    );
    expect(rows.map((row) => row.lid)).toEqual(['30@lid', '31@lid', '32@lid', '33@lid']);
    expect(new Set(rows.slice(1).map((row) => row.tx)).size).toBe(1);
    expect(rows[0].tx).not.toBe(rows[1].tx);
  });

  it("should share a group among the instances whose writes wait, so that one instance's backlog does not fill it (issue #39)", async () => {
    const ids = ['share-inbound-a', 'share-inbound-b', 'share-inbound-c'];
    const instances = new InstanceRepository(db.dataSource);
    for (const id of ids) await instances.create({ id, token: `tok-${id}`, name: id });
    const leases = new LeaseRepository(db.dataSource);
    const [a, b, c] = await Promise.all(ids.map(async (id) => (await leases.claim(id, 'worker-a', 10_000))!));
    const groups: number[] = [];
    // Room for four writes in a group, one group in flight: the others wait and go together in the next ones.
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 4, maxInFlight: 1, onGroup: (writes) => groups.push(writes) });
    const write = (lease: typeof a, lid: string) => sut.write(lease, (tx) => storePair(tx, lease.instanceId, lid, `${lid}-pn`));
    const first = write(c, '40@lid'); // alone: nothing in flight yet
    // Instance a's backlog arrives before b's: unshared, a's four would fill the next group and b would wait for the one after.
    const waiting = [write(a, '41@lid'), write(a, '42@lid'), write(a, '43@lid'), write(a, '44@lid'), write(b, '45@lid'), write(b, '46@lid')];
    await Promise.all([first, ...waiting]);
    expect(groups).toEqual([1, 4, 2]);
    const rows: Array<{ lid: string; tx: string }> = await db.dataSource.query(
      `SELECT lid, xmin::text AS tx FROM lid_mappings WHERE instance_id = ANY($1::text[]) ORDER BY lid`,
      [ids],
    );
    const txOf = new Map(rows.map((row) => [row.lid, row.tx]));
    // Two of a's and both of b's in one transaction; a's last two in the next, in a's order.
    expect(new Set(['41@lid', '42@lid', '45@lid', '46@lid'].map((lid) => txOf.get(lid))).size).toBe(1);
    expect(txOf.get('43@lid')).toBe(txOf.get('44@lid'));
    expect(txOf.get('43@lid')).not.toBe(txOf.get('41@lid'));
    expect(await pnOf(ids[0], '44@lid')).toBe('44@lid-pn');
  });

  it("should write a group's receipts in one statement, an instance's next write after its receipt", async () => {
    const ids = ['group-inbound-a', 'group-inbound-b'];
    const leases = new LeaseRepository(db.dataSource);
    const [a, b] = [(await leases.holderOf(ids[0]))!, (await leases.holderOf(ids[1]))!];
    for (const [n, id] of ids.entries())
      await db.dataSource.query(
        `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, from_me) VALUES ($1, $2, $3, 'c@s.whatsapp.net', 1, 'Sent', true)`,
        [id, `r${n}`, `R${n}`],
      );
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 100, maxInFlight: 1 });
    const statements: string[] = [];
    const receipt = (lease: typeof a, messageId: string, status: string) =>
      sut.write(lease, async (tx, events) => {
        const changed = await InboundBatch.advanceStatus(new MessageRepository(db.dataSource), tx, lease.instanceId, [messageId], status);
        events.push({ eventType: 'messages_update', chatId: 'c@s.whatsapp.net', payload: { status, changed: changed.map((row) => row.status) } });
        return changed.map((row) => `${row.messageId} ${row.status}`);
      });
    const after = (lease: typeof a, messageId: string) =>
      sut.write(lease, async (tx) => {
        const row = await new MessageRepository(db.dataSource).within(tx).findByMessageId(lease.instanceId, messageId);
        return `${messageId} seen ${row?.status}`;
      });
    const hold = sut.write(a, async () => 'first'); // alone, so the rest wait and go together
    const spy = jest.spyOn(InboundGroupRepository.prototype, 'write');
    const rest = [receipt(a, 'R0', 'Delivered'), receipt(b, 'R1', 'Read'), after(a, 'R0'), receipt(a, 'R0', 'Read'), after(b, 'R1')];
    const results = await Promise.all([hold, ...rest]);
    statements.push(...spy.mock.calls.map((call) => (call[0].statuses ?? []).map((item) => `${item.instanceId} ${item.status}`).join(', ')));
    spy.mockRestore();
    expect(results).toEqual(['first', ['R0 Delivered'], ['R1 Read'], 'R0 seen Delivered', ['R0 Read'], 'R1 seen Read']);
    // a's and b's receipts in one statement; a's next write came after it (its own), the rest at the end.
    expect(statements).toEqual(['group-inbound-a Delivered, group-inbound-b Read', 'group-inbound-a Read']);
    expect(sut.stats).toMatchObject({ transactions: 2, fallbacks: 0 });
    const events: Array<{ instance_id: string; status: string }> = await db.dataSource.query(
      `SELECT instance_id, payload->>'status' AS status FROM outbox_events WHERE event_type = 'messages_update' AND payload ? 'changed' ORDER BY id`,
    );
    expect(events.map((event) => `${event.instance_id} ${event.status}`)).toEqual([
      'group-inbound-a Delivered',
      'group-inbound-b Read',
      'group-inbound-a Read',
    ]);
  });

  it("should write each round of a group's receipts, own copies and chats in one statement, a write parking once per round", async () => {
    const ids = ['group-inbound-a', 'group-inbound-b'];
    const leases = new LeaseRepository(db.dataSource);
    const [a, b] = [(await leases.holderOf(ids[0]))!, (await leases.holderOf(ids[1]))!];
    const chat = '5511900000077@s.whatsapp.net';
    for (const id of ids)
      await db.dataSource.transaction((tx) => new ChatRepository(db.dataSource).within(tx).observe(id, { waChatId: chat }, () => `chat-${id}`));
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, from_me) VALUES ($1, 'id-RB', 'RB', $2, 1, 'Sent', true)`,
      [b.instanceId, chat],
    );
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 100, maxInFlight: 1 });
    const sent = (lease: typeof a, messageId: string, timestamp: number) =>
      sut.write(lease, async (tx, events) => {
        const copy = await InboundBatch.storeOwnCopy(
          new MessageRepository(db.dataSource),
          tx,
          newMessageFixture(lease.instanceId, {
            id: `id-${messageId}`,
            messageId,
            chatId: chat,
            messageTimestamp: timestamp,
            status: 'Sent',
            fromMe: true,
            text: messageId,
          }),
        );
        const row = await InboundBatch.observeChat(
          new ChatRepository(db.dataSource),
          tx,
          lease.instanceId,
          { waChatId: chat, lastMessage: { timestamp, type: 'Conversation', textVote: messageId, sender: 'me', incoming: false } },
          () => 'unused',
        );
        events.push({ eventType: 'messages', chatId: chat, payload: { messageId, last: row.lastMessageTextVote } });
        return `${copy?.created ? 'created' : 'not created'} ${messageId}, chat says ${row.lastMessageTextVote}`;
      });
    const receipt = (lease: typeof a, messageId: string, status: string) =>
      sut.write(lease, async (tx, events) => {
        const changed = await InboundBatch.advanceStatus(new MessageRepository(db.dataSource), tx, lease.instanceId, [messageId], status);
        events.push({ eventType: 'messages', chatId: chat, payload: { messageId, last: status } });
        return changed.map((row) => `${row.messageId} ${row.status}`);
      });
    const hold = sut.write(a, async () => 'first'); // alone, so the rest wait and go together
    const spy = jest.spyOn(InboundGroupRepository.prototype, 'write');
    const results = await Promise.all([hold, sent(a, 'M1', 100), receipt(b, 'RB', 'Delivered'), sent(b, 'M2', 200), sent(a, 'M3', 300)]);
    const rounds = spy.mock.calls.map(([writes]) =>
      [
        ...(writes.statuses ?? []).map((item) => `status ${item.instanceId.slice(-1)} ${item.messageIds.join()}`),
        ...(writes.copies ?? []).map((message) => `copy ${message.instanceId.slice(-1)} ${message.messageId}`),
        ...(writes.chats ?? []).map((item) => `chat ${item.instanceId.slice(-1)} ${item.observation.lastMessage?.textVote}`),
      ].join(', '),
    );
    spy.mockRestore();
    expect(results).toEqual(['first', 'created M1, chat says M1', ['RB Delivered'], 'created M2, chat says M2', 'created M3, chat says M3']);
    // b's receipt and a's copy in one statement, then a's chat; b's next write after its receipt, a's
    // after its first (both done by then): their copies in one statement, then their chats in one.
    expect(rounds).toEqual(['status b RB, copy a M1', 'chat a M1', 'copy b M2, copy a M3', 'chat b M2, chat a M3']);
    expect(sut.stats).toMatchObject({ transactions: 2, fallbacks: 0 });
    const events: Array<{ instance_id: string; last: string }> = await db.dataSource.query(
      `SELECT instance_id, payload->>'last' AS last FROM outbox_events WHERE event_type = 'messages' AND payload ? 'last' ORDER BY id`,
    );
    // Each instance's events in the order of its writes.
    expect(events.filter((event) => event.instance_id === a.instanceId).map((event) => event.last)).toEqual(['M1', 'M3']);
    expect(events.filter((event) => event.instance_id === b.instanceId).map((event) => event.last)).toEqual(['Delivered', 'M2']);
  });

  it("should write a group in waves, each instance's first write in one round with the others' first, then each one's next", async () => {
    const ids = ['group-inbound-a', 'group-inbound-b', 'group-inbound-c'];
    const leases = new LeaseRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: ids[2], token: `tok-${ids[2]}`, name: ids[2] });
    const all = [(await leases.holderOf(ids[0]))!, (await leases.holderOf(ids[1]))!, (await leases.claim(ids[2], 'worker-a', 10_000))!];
    const chat = '5511900000088@s.whatsapp.net';
    for (const id of ids)
      await db.dataSource.transaction((tx) => new ChatRepository(db.dataSource).within(tx).observe(id, { waChatId: chat }, () => `chat88-${id}`));
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 100, maxInFlight: 1 });
    // The send path's shape: each instance's own copy (then its chat), then the receipt of that message.
    const sent = (lease: (typeof all)[number], messageId: string) =>
      sut.write(lease, async (tx, events) => {
        await InboundBatch.storeOwnCopy(
          new MessageRepository(db.dataSource),
          tx,
          newMessageFixture(lease.instanceId, { id: `id-${messageId}`, messageId, chatId: chat, messageTimestamp: 400, status: 'Sent', fromMe: true }),
        );
        await InboundBatch.observeChat(
          new ChatRepository(db.dataSource),
          tx,
          lease.instanceId,
          { waChatId: chat, lastMessage: { timestamp: 400, type: 'Conversation', textVote: messageId, sender: 'me', incoming: false } },
          () => 'unused',
        );
        events.push({ eventType: 'messages', chatId: chat, payload: { wave: `sent ${messageId}` } });
        return `sent ${messageId}`;
      });
    const receipt = (lease: (typeof all)[number], messageId: string) =>
      sut.write(lease, async (tx, events) => {
        const changed = await InboundBatch.advanceStatus(new MessageRepository(db.dataSource), tx, lease.instanceId, [messageId], 'Delivered');
        events.push({ eventType: 'messages_update', chatId: chat, payload: { wave: `receipt ${messageId}` } });
        return changed.map((row) => `${row.messageId} ${row.status}`).join();
      });
    const hold = sut.write(all[0], async () => 'first'); // alone, so the rest wait and go together
    const spy = jest.spyOn(InboundGroupRepository.prototype, 'write');
    const results = await Promise.all([hold, ...all.flatMap((lease, n) => [sent(lease, `W${n}`), receipt(lease, `W${n}`)])]);
    const rounds = spy.mock.calls.map(([writes]) =>
      [
        ...(writes.statuses ?? []).map((item) => `status ${item.instanceId.slice(-1)}`),
        ...(writes.copies ?? []).map((message) => `copy ${message.instanceId.slice(-1)}`),
        ...(writes.chats ?? []).map((item) => `chat ${item.instanceId.slice(-1)}`),
      ].join(', '),
    );
    spy.mockRestore();
    expect(results).toEqual(['first', 'sent W0', 'W0 Delivered', 'sent W1', 'W1 Delivered', 'sent W2', 'W2 Delivered']);
    // Three rounds, not seven: in arrival order each receipt flushed every parked write before it.
    expect(rounds).toEqual(['copy a, copy b, copy c', 'chat a, chat b, chat c', 'status a, status b, status c']);
    const events: Array<{ instance_id: string; wave: string }> = await db.dataSource.query(
      `SELECT instance_id, payload->>'wave' AS wave FROM outbox_events WHERE payload ? 'wave' ORDER BY id`,
    );
    for (const [n, id] of ids.entries())
      expect(events.filter((event) => event.instance_id === id).map((event) => event.wave)).toEqual([`sent W${n}`, `receipt W${n}`]);
  });

  it("should put one instance's writes about different messages in one wave, after the writes about the same messages or naming none", async () => {
    const id = 'group-inbound-keyed';
    await new InstanceRepository(db.dataSource).create({ id, token: `tok-${id}`, name: id });
    const lease = (await new LeaseRepository(db.dataSource).claim(id, 'worker-a', 10_000))!;
    const chats = { K1: '5511900000077@s.whatsapp.net', K2: '5511900000078@s.whatsapp.net' } as Record<string, string>;
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 100, maxInFlight: 1 });
    // One busy instance: its own copies (then their chat) and their receipts, as the send path and a chatbot bring them;
    // keyed as the socket handler keys them: a message's write by the message and its chat, a receipt by its messages.
    const sent = (messageId: string, at: number, chat = chats[messageId]) =>
      sut.write(
        lease,
        async (tx, events) => {
          await InboundBatch.storeOwnCopy(
            new MessageRepository(db.dataSource),
            tx,
            newMessageFixture(id, { id: `id-${messageId}`, messageId, chatId: chat, messageTimestamp: at, status: 'Sent', fromMe: true }),
          );
          const row = await InboundBatch.observeChat(
            new ChatRepository(db.dataSource),
            tx,
            id,
            { waChatId: chat, lastMessage: { timestamp: at, type: 'Conversation', textVote: messageId, sender: 'me', incoming: false } },
            () => `chat77-${messageId}`,
          );
          events.push({ eventType: 'messages', chatId: chat, payload: { keyed: `sent ${messageId}` } });
          return `sent ${messageId}, chat last ${row.lastMessageTextVote}`;
        },
        [`message ${messageId}`, `chat ${chat}`],
      );
    const receipt = (messageId: string, status: string) =>
      sut.write(
        lease,
        async (tx, events) => {
          const changed = await InboundBatch.advanceStatus(new MessageRepository(db.dataSource), tx, id, [messageId], status);
          events.push({ eventType: 'messages_update', chatId: chats.K1, payload: { keyed: `${status} ${messageId}` } });
          return changed.map((row) => `${row.messageId} ${row.status}`).join() || `${messageId} not stored`;
        },
        [`message ${messageId}`],
      );
    const unkeyed = () =>
      sut.write(lease, async (_tx, events) => {
        events.push({ eventType: 'presence', chatId: chats.K1, payload: { keyed: 'unkeyed' } });
        return 'unkeyed';
      });
    const hold = sut.write(lease, async () => 'first'); // alone, so the rest wait and go together
    const spy = jest.spyOn(InboundGroupRepository.prototype, 'write');
    const results = await Promise.all([
      hold,
      sent('K1', 500),
      sent('K2', 501),
      receipt('K1', 'Delivered'),
      receipt('K2', 'Delivered'),
      receipt('K1', 'Read'),
      unkeyed(),
      receipt('K2', 'Read'),
      sent('K3', 502, chats.K1),
    ]);
    const rounds = spy.mock.calls.map(([writes]) =>
      [
        ...(writes.statuses ?? []).map((item) => `status ${item.messageIds.join()} ${item.status}`),
        ...(writes.copies ?? []).map((message) => `copy ${message.messageId}`),
        ...(writes.chats ?? []).map((item) => `chat ${item.observation.lastMessage?.textVote}`),
      ].join(', '),
    );
    spy.mockRestore();
    expect(results).toEqual([
      'first',
      'sent K1, chat last K1',
      'sent K2, chat last K2',
      'K1 Delivered',
      'K2 Delivered',
      'K1 Read',
      'unkeyed',
      'K2 Read',
      'sent K3, chat last K3',
    ]);
    // Waves: both copies (then both chats), both first receipts; K1's read; the unkeyed write; K2's read with
    // K3's copy, a message of K1's chat (after K1's). Before, one wave per write: eight waves, ten rounds.
    expect(rounds).toEqual([
      'copy K1, copy K2',
      'chat K1, chat K2',
      'status K1 Delivered, status K2 Delivered',
      'status K1 Read',
      'status K2 Read, copy K3',
      'chat K3',
    ]);
    // Each instance's events in arrival order, whichever wave wrote them.
    const events: Array<{ keyed: string }> = await db.dataSource.query(
      `SELECT payload->>'keyed' AS keyed FROM outbox_events WHERE instance_id = $1 AND payload ? 'keyed' ORDER BY id`,
      [id],
    );
    expect(events.map((event) => event.keyed)).toEqual(['sent K1', 'sent K2', 'Delivered K1', 'Delivered K2', 'Read K1', 'unkeyed', 'Read K2', 'sent K3']);
    const stored: Array<{ chat: string; last: string }> = await db.dataSource.query(
      `SELECT wa_chatid AS chat, last_message_text_vote AS last FROM chats WHERE instance_id = $1 ORDER BY wa_chatid`,
      [id],
    );
    expect(stored).toEqual([
      { chat: chats.K1, last: 'K3' },
      { chat: chats.K2, last: 'K2' },
    ]);
  });

  it('should put the messages of one chat observed under the same identifiers in one wave, the round applying them in order (ADR 0048)', async () => {
    const id = 'group-inbound-busy-chat';
    await new InstanceRepository(db.dataSource).create({ id, token: `tok-${id}`, name: id });
    const lease = (await new LeaseRepository(db.dataSource).claim(id, 'worker-a', 10_000))!;
    const chat = '5511900000066@s.whatsapp.net';
    const lid = '99000066@lid';
    await db.dataSource.transaction((tx) => new ChatRepository(db.dataSource).within(tx).observe(id, { waChatId: chat, waChatLid: lid }, () => 'chat66'));
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 100, maxInFlight: 1 });
    const senders: string[] = [];
    // Received messages as the socket handler keys them: the message, its chat observed (by JID and LID), its sender.
    const received = (messageId: string, at: number, identifiers: { waChatId: string; waChatLid?: string }) =>
      sut.write(
        lease,
        async (tx, events) => {
          // The sender observed once for the wave: the first write says whether it changed, the others find it as it left it.
          const sender = await InboundBatch.once(
            tx,
            `sender ${chat}`,
            async () => ({ first: messageId, changed: true }),
            (first) => ({ ...first, changed: false }),
          );
          senders.push(`${messageId}: ${sender.first} ${sender.changed ? 'changed' : 'unchanged'}`);
          const row = await InboundBatch.observeChat(
            new ChatRepository(db.dataSource),
            tx,
            id,
            { ...identifiers, lastMessage: { timestamp: at, type: 'Conversation', textVote: messageId, sender: chat, incoming: true } },
            () => `unused-${messageId}`,
          );
          events.push({ eventType: 'messages', chatId: chat, payload: { busy: messageId } });
          return `${messageId}: unread ${row.unreadCount}, last ${row.lastMessageTextVote}`;
        },
        [`message ${messageId}`, ...chatObservationKeys([identifiers.waChatId, identifiers.waChatLid ?? '']), ...senderObservationKeys([chat, lid], 'Ana')],
      );
    const hold = sut.write(lease, async () => 'first'); // alone, so the rest wait and go together
    const spy = jest.spyOn(InboundGroupRepository.prototype, 'write');
    const both = { waChatId: chat, waChatLid: lid };
    const results = await Promise.all([
      hold,
      received('B1', 600, both),
      received('B2', 601, both),
      received('B3', 602, both),
      // Named by its JID alone: not the same identifiers, so a wave after them.
      received('B4', 603, { waChatId: chat }),
    ]);
    const rounds = spy.mock.calls.map(([writes]) => (writes.chats ?? []).map((item) => `chat ${item.observation.lastMessage?.textVote}`).join(', '));
    spy.mockRestore();
    // Each write sees the row as its own observation left it, as one after the other would.
    expect(results).toEqual(['first', 'B1: unread 1, last B1', 'B2: unread 2, last B2', 'B3: unread 3, last B3', 'B4: unread 4, last B4']);
    expect(rounds).toEqual(['chat B1, chat B2, chat B3', 'chat B4']);
    // B4 is in a wave of its own: its sender is observed again there.
    expect(senders).toEqual(['B1: B1 changed', 'B2: B1 unchanged', 'B3: B1 unchanged', 'B4: B4 changed']);
    const stored: Array<{ unread: number; last: string }> = await db.dataSource.query(
      `SELECT unread_count AS unread, last_message_text_vote AS last FROM chats WHERE instance_id = $1`,
      [id],
    );
    expect(stored).toEqual([{ unread: 4, last: 'B4' }]);
    const events: Array<{ busy: string }> = await db.dataSource.query(
      `SELECT payload->>'busy' AS busy FROM outbox_events WHERE instance_id = $1 AND payload ? 'busy' ORDER BY id`,
      [id],
    );
    expect(events.map((event) => event.busy)).toEqual(['B1', 'B2', 'B3', 'B4']);
  });

  it('should try a write that fails alone again before the later writes of its instance, and give up after three tries', async () => {
    const id = 'group-inbound-b';
    const lease = (await new LeaseRepository(db.dataSource).holderOf(id))!;
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 100, maxInFlight: 4 });
    const order: string[] = [];
    let flaky = 2;
    const results = await Promise.allSettled([
      sut.write(lease, async (tx) => {
        order.push('flaky');
        if (flaky-- > 0) await failingStatement(tx);
        return 'flaky';
      }),
      sut.write(lease, async () => {
        order.push('next');
        return 'next';
      }),
      sut.write(lease, async (tx) => {
        order.push('bad');
        await failingStatement(tx);
      }),
      sut.write(lease, async () => {
        order.push('last');
        return 'last';
      }),
    ]);
    expect(results.map((result) => (result.status === 'fulfilled' ? result.value : (result.reason as Error).name))).toEqual([
      'flaky',
      'next',
      'InboundWriteFailedError',
      'last',
    ]);
    // flaky alone twice (it failed, then again), then the group of the other three failed on bad and ran alone, bad three times.
    expect(order).toEqual(['flaky', 'flaky', 'flaky', 'next', 'bad', 'next', 'bad', 'bad', 'bad', 'last']);
    expect(sut.pending()).toBe(0);
  });

  it('should write each write of a failed group alone, so only the bad one fails', async () => {
    const id = 'group-inbound-a';
    const lease = (await new LeaseRepository(db.dataSource).holderOf(id))!;
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 100, maxInFlight: 1 });
    const insert = (lid: string, bad = false) =>
      sut.write(lease, async (tx) => {
        // The bad one's statement fails in the database, and with it the group.
        await (bad ? failingStatement(tx) : storePair(tx, id, lid, `${lid}-pn`));
        return lid;
      });
    const results = await Promise.allSettled([insert('20@lid'), insert('21@lid'), insert('23@lid', true), insert('22@lid')]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(sut.stats.fallbacks).toBe(1);
    expect(await Promise.all(['20@lid', '21@lid', '22@lid'].map((lid) => pnOf(id, lid)))).toEqual(['20@lid-pn', '21@lid-pn', '22@lid-pn']);
  });
  it('should end a failed group only once every parked write has finished, so none writes after the rollback', async () => {
    const ids = ['group-inbound-a', 'group-inbound-b'];
    const leases = new LeaseRepository(db.dataSource);
    const [a, b] = [(await leases.holderOf(ids[0]))!, (await leases.holderOf(ids[1]))!];
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 100, maxInFlight: 1 });
    const hold = sut.write(a, async () => 'first'); // alone, so the next two wait and go together
    let tries = 0;
    let slowFinished = false;
    const order: string[] = [];
    // a's receipt parks, then fails once it has its rows: the group fails.
    const failing = sut.write(a, async (tx) => {
      tries++;
      await InboundBatch.advanceStatus(new MessageRepository(db.dataSource), tx, a.instanceId, ['none'], 'Delivered');
      if (tries === 1) throw new Error('bad receipt');
      order.push(`failing again, slow one finished before: ${slowFinished}`);
      return 'failing';
    });
    // b's receipt parks too; with its rows it goes on with a slower statement, then another write.
    let slowTries = 0;
    const slow = sut.write(b, async (tx) => {
      const attempt = ++slowTries;
      await InboundBatch.advanceStatus(new MessageRepository(db.dataSource), tx, b.instanceId, ['none'], 'Delivered');
      // Still busy (0.2 s) when the group fails, then writes once more.
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (attempt === 1) await storePair(tx, b.instanceId, '90@lid', '90-pn');
      slowFinished = true;
      return 'slow';
    });
    const results = await Promise.allSettled([hold, failing, slow]);
    expect(results.map((result) => (result.status === 'fulfilled' ? result.value : String(result.reason)))).toEqual(['first', 'failing', 'slow']);
    expect(sut.stats.fallbacks).toBe(1);
    // b's first try wrote nothing: it ran inside the group, which rolled back.
    expect(await pnOf(b.instanceId, '90@lid')).toBeNull();
    // The group's transaction ended after b's first try had finished (inside it, rolled back), not while it was still writing.
    expect(order).toEqual(['failing again, slow one finished before: true']);
  });

  it("should observe a wave's senders in one statement beside the round's, each sender once, and leave a later look in the wave without a statement (ADR 0055)", async () => {
    const id = 'group-inbound-senders';
    await new InstanceRepository(db.dataSource).create({ id, token: `tok-${id}`, name: id });
    const lease = (await new LeaseRepository(db.dataSource).claim(id, 'worker-a', 10_000))!;
    const contacts = new ContactRepository(db.dataSource);
    const [ana, bia, caio] = ['5511900000061@s.whatsapp.net', '5511900000062@s.whatsapp.net', '5511900000063@s.whatsapp.net'];
    await contacts.observe(id, { jid: ana, lid: '61@lid', pushName: 'Ana' });
    await contacts.observe(id, { jid: bia, pushName: 'Bia' });
    const sut = new InboundStore(db.dataSource, bus, pino({ level: 'silent' }), { maxBatch: 100, maxInFlight: 1 });
    const key = (pn: string, lid: string, pushName: string) => `sender ${id}\u0000${pn}\u0000${lid}\u0000${pushName}`;
    // A received message's write as MessageStore makes it: its chat and its author in one round.
    const received = (messageId: string, chat: string, sender: { pn: string; lid: string; pushName: string }) =>
      sut.write(
        lease,
        async (tx) => {
          const { sender: author } = await InboundBatch.observeChatAndSender(
            new ChatRepository(db.dataSource),
            contacts,
            tx,
            id,
            { waChatId: chat, lastMessage: { timestamp: 600, type: 'Conversation', textVote: messageId, sender: sender.pn, incoming: true } },
            () => `chat-${messageId}`,
            { key: key(sender.pn, sender.lid, sender.pushName), ...sender },
          );
          // Baileys' contacts.update repeating the push name, looked at later in the same write: no statement of its own.
          const again = await InboundBatch.once(
            tx,
            key(sender.pn, sender.lid, sender.pushName),
            () => contacts.within(tx).observe(id, { jid: sender.pn, lid: sender.lid, pushName: sender.pushName }),
            (first) => ({ ...first, changed: false }),
          );
          return `${messageId} ${author?.contact.pushName} ${author?.changed} ${again.changed}`;
        },
        [`message ${messageId}`, ...chatObservationKeys([chat]), ...senderObservationKeys([sender.pn, sender.lid], sender.pushName)],
      );
    const hold = sut.write(lease, async () => 'first'); // alone, so the rest wait and go together
    const observed = jest.spyOn(ContactRepository.prototype, 'observe');
    const read = jest.spyOn(ContactRepository.prototype, 'knownSenders');
    const results = await Promise.all([
      hold,
      received('S1', '5511900000071@s.whatsapp.net', { pn: ana, lid: '61@lid', pushName: 'Ana' }),
      received('S2', '5511900000072@s.whatsapp.net', { pn: bia, lid: '', pushName: 'Bia Maria' }),
      received('S3', '5511900000073@s.whatsapp.net', { pn: caio, lid: '', pushName: 'Caio' }),
      received('S4', '5511900000074@s.whatsapp.net', { pn: caio, lid: '', pushName: 'Caio' }),
    ]);
    const alone = observed.mock.calls.map((call) => call[1].jid);
    const senders = read.mock.calls.map(([asked]) => asked.map((sender) => `${sender.pn.slice(0, 13)} ${sender.pushName}`));
    observed.mockRestore();
    read.mockRestore();
    // Ana as stored; Bia renamed; Caio new, his second message finding him as the first left him.
    expect(results).toEqual(['first', 'S1 Ana false false', 'S2 Bia Maria true false', 'S3 Caio true false', 'S4 Caio false false']);
    // One wave: one statement read its three senders (Caio once); only the rename and the new contact went alone.
    expect(senders).toEqual([['5511900000061 Ana', '5511900000062 Bia Maria', '5511900000063 Caio']]);
    expect(alone).toEqual([bia, caio]);
    expect(await contacts.find(id, caio)).toMatchObject({ pushName: 'Caio' });
    expect(await contacts.find(id, bia)).toMatchObject({ pushName: 'Bia Maria' });
    expect(sut.stats).toMatchObject({ fallbacks: 0 });
  });
});
