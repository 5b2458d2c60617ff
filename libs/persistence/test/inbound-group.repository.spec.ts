import { genericPlan, newMessageFixture, openTestDatabase, planChoices, type TestDatabase } from '@gw/testing';
import {
  ChatRepository,
  ContactRepository,
  InboundGroupRepository,
  InstanceRepository,
  LeaseRepository,
  MessageRepository,
  type ChatRow,
  type InboundGroupWrites,
} from '@gw/persistence';

describe('InboundGroupRepository.write (a round of the inbound group transaction)', () => {
  let db: TestDatabase;
  const ids = ['igr-a', 'igr-b', 'igr-c'];
  const chat = '5511900000088@s.whatsapp.net';
  const round = (n: number): InboundGroupWrites => ({
    statuses: [{ instanceId: 'igr-a', messageIds: [`A${n}`], status: 'Delivered' }],
    copies: [newMessageFixture('igr-b', { id: `id-B${n}`, messageId: `B${n}`, chatId: chat, fromMe: true, status: 'Sent', raw: `{"n":${n}}` })],
    chats: [
      {
        instanceId: 'igr-c',
        observation: { waChatId: chat, lastMessage: { timestamp: 1000 + n, type: 'Conversation', textVote: `C${n}`, sender: 'me', incoming: false } },
        newId: () => 'unused',
      },
    ],
  });

  beforeAll(async () => {
    db = await openTestDatabase();
    for (const id of ids) await new InstanceRepository(db.dataSource).create({ id, token: `tok-${id}`, name: id });
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, from_me) SELECT 'igr-a', 'id-A' || g, 'A' || g, $1, g, 'Sent', true FROM generate_series(0, 20) g`,
      [chat],
    );
    await db.dataSource.transaction((manager) => new ChatRepository(db.dataSource).within(manager).observe('igr-c', { waChatId: chat }, () => 'chat-c'));
  });
  afterAll(() => db.close());

  /** One round in its own transaction, with the statements it sent. */
  const recordedRound = async (writes: InboundGroupWrites) => {
    const texts: string[] = [];
    const written = await db.dataSource.transaction(async (manager) => {
      const query = manager.query.bind(manager);
      jest.spyOn(manager, 'query').mockImplementation((sql: string, parameters?: Parameters<typeof query>[1]) => {
        texts.push(sql);
        return query(sql, parameters);
      });
      return new InboundGroupRepository(db.dataSource).within(manager).write(writes);
    });
    return { texts, written };
  };

  it("should write a receipt, a copy and a chat of three instances in one statement, each answered as its kind's own statement did", async () => {
    const { texts, written } = await recordedRound(round(0));
    expect(texts).toHaveLength(1);
    expect(written.statuses).toEqual([{ instanceId: 'igr-a', messageId: 'A0', chatId: chat, chatLid: '', fromMe: true, isGroup: false, status: 'Delivered' }]);
    expect(written.copies).toHaveLength(1);
    expect(written.copies[0]).toMatchObject({ created: true, advanced: false });
    // Every column of the answered rows in its own type: the rows as read back.
    expect(written.copies[0]?.row).toEqual(await new MessageRepository(db.dataSource).findOne('igr-b', 'B0'));
    expect(written.chats).toHaveLength(1);
    expect(written.chats[0]).toEqual(await new ChatRepository(db.dataSource).findByJid('igr-c', chat));
    expect(written.chats[0]).toMatchObject({ id: 'chat-c', lastMessageTextVote: 'C0', lastMsgTimestamp: 1000 });

    // The same copy again changes nothing (Baileys emits some messages twice); an empty round writes nothing.
    const again = await db.dataSource.transaction((manager) => new InboundGroupRepository(db.dataSource).within(manager).write({ copies: round(0).copies }));
    expect(again).toEqual({ statuses: [], copies: [null], chats: [], senders: [] });
    expect(await db.dataSource.transaction((manager) => new InboundGroupRepository(db.dataSource).within(manager).write({}))).toEqual({
      statuses: [],
      copies: [],
      chats: [],
      senders: [],
    });
  });

  it("should write one instance's chats in one statement, a chat two of them found included, each change on the one before", async () => {
    const [x, y, z] = ['5511900000081@s.whatsapp.net', '5511900000082@s.whatsapp.net', '5511900000083@s.whatsapp.net'];
    const yLid = '77700000082@lid';
    await db.dataSource.transaction(async (manager) => {
      await new ChatRepository(db.dataSource).within(manager).observe('igr-c', { waChatId: x }, () => 'chat-x');
      await new ChatRepository(db.dataSource).within(manager).observe('igr-c', { waChatId: y, waChatLid: yLid }, () => 'chat-y');
      await new ChatRepository(db.dataSource).within(manager).observe('igr-c', { waChatId: z }, () => 'chat-z');
    });
    const alone = [jest.spyOn(ChatRepository.prototype, 'observeUnknown'), jest.spyOn(ChatRepository.prototype, 'observe')];
    const observation = (waChatId: string, waChatLid: string, text: string, timestamp: number) => ({
      instanceId: 'igr-c',
      observation: { waChatId, waChatLid, lastMessage: { timestamp, type: 'Conversation', textVote: text, sender: 'them', incoming: true } },
      newId: () => 'unused',
    });
    // Three chats of one instance, chat y named once by its JID and once by its LID only.
    const { texts, written } = await recordedRound({
      chats: [observation(x, '', 'X1', 2001), observation(y, '', 'Y1', 2002), observation('', yLid, 'Y2', 2003), observation(z, '', 'Z1', 2004)],
    });
    const observedAlone = alone.flatMap((spy) => spy.mock.calls.map((call) => call[1].lastMessage?.textVote));
    for (const spy of alone) spy.mockRestore();
    expect(written.chats.map((chat) => `${chat.id} ${chat.lastMessageTextVote} ${chat.unreadCount}`)).toEqual([
      'chat-x X1 1',
      'chat-y Y1 1',
      'chat-y Y2 2',
      'chat-z Z1 1',
    ]);
    // x and z each in one update, y's two observations folded in order into one (ADR 0051): one statement.
    expect(texts).toHaveLength(1);
    expect(observedAlone).toEqual([]);
    const stored = await new ChatRepository(db.dataSource).findByJid('igr-c', y);
    expect(stored).toMatchObject({ id: 'chat-y', lastMessageTextVote: 'Y2', unreadCount: 2 });
  });

  it("should answer each of a busy chat's observations as one statement each would have, and store the last (ADR 0051)", async () => {
    // Twin chats in one state (marked unread, a name, a timer); the same observations go to one folded
    // in a round and to the other one statement each (ChatRepository.observe), in the same order.
    const [folded, alone] = ['5511900000091@s.whatsapp.net', '5511900000092@s.whatsapp.net'];
    const chats = new ChatRepository(db.dataSource);
    await db.dataSource.transaction(async (manager) => {
      await chats.within(manager).observe('igr-c', { waChatId: folded, waName: 'Before' }, () => 'chat-fold');
      await chats.within(manager).observe('igr-c', { waChatId: alone, waName: 'Before' }, () => 'chat-alone');
    });
    await db.dataSource.query(
      `UPDATE chats SET marked_unread = true, unread_count = 1, last_msg_timestamp = 3000, ephemeral_expiration = 60 WHERE instance_id = 'igr-c' AND id IN ('chat-fold', 'chat-alone')`,
    );
    const steps = (waChatId: string) =>
      [
        { waChatId, lastMessage: { timestamp: 3001, type: 'Conversation', textVote: 'in 1', sender: 'them', incoming: true } },
        { waChatId, lastMessage: { timestamp: 2000, type: 'Conversation', textVote: 'older', sender: 'them', incoming: true } },
        { waChatId, waName: 'After', ephemeralExpiration: 0 },
        { waChatId, waContactName: 'Saved', lastMessage: { timestamp: 3002, type: 'ImageMessage', textVote: '', sender: 'me', incoming: false } },
        { waChatId, lastMessage: { timestamp: 3002, type: 'Conversation', textVote: 'in 2', sender: 'them', incoming: true, incomingCount: 3 } },
      ] as const;
    const { texts, written } = await recordedRound({
      chats: steps(folded).map((observation) => ({ instanceId: 'igr-c', observation, newId: () => 'unused' })),
    });
    expect(texts).toHaveLength(1);
    const expected = [];
    for (const observation of steps(alone)) expected.push((await chats.observe('igr-c', observation, () => 'unused')).chat);
    const comparable = (row: ChatRow) => ({ ...row, id: '', waChatId: '', createdAt: null, updatedAt: null });
    expect(written.chats.map(comparable)).toEqual(expected.map(comparable));
    expect(written.chats.map((row) => `${row.unreadCount} ${row.lastMessageTextVote} ${row.name}`)).toEqual([
      '1 in 1 Before',
      '2 in 1 Before',
      '2 in 1 After',
      '2  Saved',
      '5 in 2 Saved',
    ]);
    expect(comparable((await chats.findByJid('igr-c', folded))!)).toEqual(comparable(expected[expected.length - 1]));
  });

  it("should fold a busy chat's observations onto a change another transaction committed while the round waited for the row", async () => {
    const jid = '5511900000093@s.whatsapp.net';
    const chats = new ChatRepository(db.dataSource);
    await db.dataSource.transaction((manager) => chats.within(manager).observe('igr-c', { waChatId: jid }, () => 'chat-race'));
    const other = db.dataSource.createQueryRunner();
    await other.connect();
    await other.startTransaction();
    // Read the chat (the user marks it read and renames it) and hold its row.
    await other.query(`UPDATE chats SET unread_count = 10, wa_name = 'Renamed' WHERE instance_id = 'igr-c' AND id = 'chat-race'`);
    const incoming = (text: string, timestamp: number) => ({
      instanceId: 'igr-c',
      observation: { waChatId: jid, lastMessage: { timestamp, type: 'Conversation', textVote: text, sender: 'them', incoming: true } },
      newId: () => 'unused',
    });
    const round = recordedRound({ chats: [incoming('R1', 4001), incoming('R2', 4002)] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await other.commitTransaction();
    await other.release();
    const { written } = await round;
    expect(written.chats.map((row) => `${row.unreadCount} ${row.waName} ${row.lastMessageTextVote}`)).toEqual(['11 Renamed R1', '12 Renamed R2']);
    expect(await chats.findByJid('igr-c', jid)).toMatchObject({ unreadCount: 12, waName: 'Renamed', lastMessageTextVote: 'R2' });
  });

  it("should read a round's senders in one statement beside its own and observe alone, in order, only those not stored as given (ADR 0055)", async () => {
    const contacts = new ContactRepository(db.dataSource);
    const [known, renamed, fresh, moved] = [
      '5511900000071@s.whatsapp.net',
      '5511900000072@s.whatsapp.net',
      '5511900000073@s.whatsapp.net',
      '5511900000074@s.whatsapp.net',
    ];
    await db.dataSource.transaction(async (manager) => {
      await contacts.within(manager).observe('igr-c', { jid: known, lid: '77700000071@lid', pushName: 'Known' });
      await contacts.within(manager).observe('igr-c', { jid: renamed, pushName: 'Old' });
      await contacts.within(manager).observe('igr-c', { lid: '77700000074@lid', pushName: 'By LID' });
    });
    const observeAlone = jest.spyOn(ContactRepository.prototype, 'observe');
    const sender = (pn: string, lid: string, pushName: string) => ({ instanceId: 'igr-c', pn, lid, pushName });
    const { texts, written } = await recordedRound({
      chats: round(1).chats,
      senders: [
        sender(known, '77700000071@lid', 'Known'),
        sender('', '77700000071@lid', ''),
        sender(renamed, '', 'New'),
        sender(fresh, '', 'Fresh'),
        sender(fresh, '', 'Fresh'),
        sender(moved, '77700000074@lid', 'By LID'),
      ],
    });
    const alone = observeAlone.mock.calls.map((call) => call[1].jid || call[1].lid);
    observeAlone.mockRestore();
    expect(written.senders.map(({ contact, changed }) => `${contact.jid} ${contact.pushName} ${changed}`)).toEqual([
      `${known} Known false`,
      `${known} Known false`,
      `${renamed} New true`,
      `${fresh} Fresh true`,
      `${fresh} Fresh false`,
      `${moved} By LID true`,
    ]);
    expect(written.chats[0]).toMatchObject({ lastMessageTextVote: 'C1' });
    // The round's statement (its chat), and one statement read every sender; the rename, the new contact
    // (twice: the second finds the first's row) and the LID row moving to its number went through
    // observe()'s locked path, each after both.
    expect(texts.slice(0, 2).filter((text) => text.includes('k_input'))).toHaveLength(1);
    expect(texts.slice(0, 2).filter((text) => text.includes('h_input'))).toHaveLength(1);
    expect(texts.filter((text) => text.includes('k_input'))).toHaveLength(1);
    // Each goes at once but the second new one, which waits for the first of its number.
    expect(alone).toEqual([renamed, fresh, moved, fresh]);
    expect(await contacts.find('igr-c', '77700000074@lid')).toMatchObject({ jid: moved, lid: '77700000074@lid', pushName: 'By LID' });
    // New senders with nothing in common go at once (their statements pipelined), not one after the other.
    const steps: string[] = [];
    const observe = ContactRepository.prototype.observe;
    const timed = jest.spyOn(ContactRepository.prototype, 'observe').mockImplementation(async function (this: ContactRepository, instanceId, observation) {
      steps.push(`start ${observation.pushName}`);
      const answer = await observe.call(this, instanceId, observation);
      steps.push(`end ${observation.pushName}`);
      return answer;
    });
    const apart = await recordedRound({ senders: [sender('5511900000075@s.whatsapp.net', '', 'One'), sender('5511900000076@s.whatsapp.net', '', 'Two')] });
    timed.mockRestore();
    expect(apart.written.senders.map(({ contact, changed }) => `${contact.pushName} ${changed}`)).toEqual(['One true', 'Two true']);
    expect(steps.slice(0, 2)).toEqual(['start One', 'start Two']);
    // A round of senders alone is their statement and the locked paths only.
    const alike = await recordedRound({ senders: [sender(fresh, '', 'Fresh'), sender(renamed, '', 'New')] });
    expect(alike.texts).toHaveLength(1);
    expect(alike.written.senders.map(({ changed }) => changed)).toEqual([false, false]);

    // Each sender looked up by its keys, not by reading the instance's contacts, with one generic plan
    // kept from the sixth call on (arrays of one to three senders, as rounds come).
    await db.dataSource.query(
      `INSERT INTO contacts (instance_id, jid, lid) SELECT 'igr-c', '55118' || g || '@s.whatsapp.net', '8' || g || '@lid' FROM generate_series(1, 3000) g`,
    );
    await db.dataSource.query(`ANALYZE contacts`);
    const statement = texts.find((text) => text.includes('k_input'))!;
    const parameters = [
      ['igr-c', 'igr-c'],
      [known, ''],
      ['77700000071@lid', '77700000075@lid'],
      ['Known', 'X'],
    ];
    const plan = await genericPlan(db.dataSource, statement, parameters);
    expect(plan).toMatch(/contacts_pkey|contacts_lid/);
    expect(plan).not.toMatch(/Seq Scan on contacts/);
    expect(await planChoices(db.dataSource, statement, parameters, 10)).toEqual({ custom: 5, generic: 5 });
  });

  it("should carry a round's receipts and copies in key order, as the send ledger's groups do, and answer each copy in its caller's order", async () => {
    const parameters: unknown[][] = [];
    const copies = ['Z9', 'M5', 'A1'].map((messageId) =>
      newMessageFixture('igr-b', { id: `id-${messageId}`, messageId, chatId: chat, fromMe: true, status: 'Sent' }),
    );
    const written = await db.dataSource.transaction(async (manager) => {
      const query = manager.query.bind(manager);
      jest.spyOn(manager, 'query').mockImplementation((sql: string, values?: Parameters<typeof query>[1]) => {
        parameters.push((values ?? []) as unknown[]);
        return query(sql, values);
      });
      return new InboundGroupRepository(db.dataSource)
        .within(manager)
        .write({ statuses: [{ instanceId: 'igr-a', messageIds: ['A9', 'A3', 'A12'], status: 'Read' }], copies });
    });
    // Lock order: receipts A12, A3, A9 (code-unit order of the keys), copies A1, M5, Z9.
    expect(parameters[0][1]).toEqual(['A12', 'A3', 'A9']);
    expect(parameters[0][5]).toEqual(['A1', 'M5', 'Z9']);
    expect(written.copies.map((copy) => copy?.row.messageId)).toEqual(['Z9', 'M5', 'A1']);
  });

  it('should not deadlock with a writer that locks the same rows in key order when its receipt row sorts after its copy row', async () => {
    // The send ledger's results lock in key order: here A12 then A15. The round updates A15's status and A12's copy.
    const ledger = db.dataSource.createQueryRunner();
    await ledger.connect();
    await ledger.startTransaction();
    try {
      await ledger.query(`UPDATE messages SET updated_at = now() WHERE instance_id = 'igr-a' AND message_id = 'A12'`);
      const round = db.dataSource.transaction((manager) =>
        new InboundGroupRepository(db.dataSource).within(manager).write({
          statuses: [{ instanceId: 'igr-a', messageIds: ['A15'], status: 'Read' }],
          copies: [newMessageFixture('igr-a', { id: 'id-A12', messageId: 'A12', chatId: chat, fromMe: true, status: 'Sent', raw: '{"copy":12}' })],
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 300)); // the round now waits for A12
      const started = Date.now();
      await ledger.query(`UPDATE messages SET updated_at = now() WHERE instance_id = 'igr-a' AND message_id = 'A15'`);
      expect(Date.now() - started).toBeLessThan(500); // not held by the round: it locked nothing before A12
      await ledger.commitTransaction();
      const written = await round;
      expect(written.statuses.map((change) => change.messageId)).toEqual(['A15']);
      expect(written.copies[0]?.row.messageId).toBe('A12');
    } finally {
      if (ledger.isTransactionActive) await ledger.rollbackTransaction();
      await ledger.release();
    }
  });

  it('should store a copy whose record id is taken in its instance under a fresh id and answer that id, the other instance keeping it (ADR 0040)', async () => {
    const messages = new MessageRepository(db.dataSource);
    await messages.upsert(newMessageFixture('igr-b', { id: 'rtakenig', messageId: 'TAKEN-HOLDER', chatId: chat }));
    const copy = (instanceId: string) => newMessageFixture(instanceId, { id: 'rtakenig', messageId: 'TAKEN-COPY', chatId: chat, fromMe: true, raw: '{"t":1}' });
    const written = await db.dataSource.transaction((manager) =>
      new InboundGroupRepository(db.dataSource).within(manager).write({ copies: [copy('igr-b'), copy('igr-c')] }),
    );
    const [taken, free] = written.copies;
    expect(taken).toMatchObject({ created: true });
    expect(taken!.row.id).toMatch(/^r[0-9a-f]{7}$/);
    expect(taken!.row.id).not.toBe('rtakenig');
    expect((await messages.findOne('igr-b', 'TAKEN-COPY'))!.id).toBe(taken!.row.id);
    expect((await messages.findOne('igr-b', 'TAKEN-HOLDER'))!.id).toBe('rtakenig');
    expect(free!.row.id).toBe('rtakenig');
  });

  it('should answer each copy as stored, inserted or merged into a stored row, every column in its own type', async () => {
    const messages = new MessageRepository(db.dataSource);
    // A received message with every kind of column: JSON content (nested, unicode, numbers), a stored copy, no optional columns.
    const received = newMessageFixture('igr-b', {
      id: 'id-RICH',
      messageId: 'RICH-1',
      chatId: chat,
      fromMe: false,
      source: 'android',
      status: 'Delivered',
      messageTimestamp: 1_765_000_000,
      text: 'l\u00edne "one"\nline two 🎉',
      messageType: 'ExtendedTextMessage',
      content: {
        text: 'l\u00edne "one"',
        contextInfo: { stanzaId: 'Q1', mentionedJid: ['1@s.whatsapp.net'], expiration: 0, nested: { n: -1.5, b: false, z: null } },
      },
      raw: '{"key":{"id":"RICH-1"},"message":{"conversation":"ol\u00e1 🎉"}}',
      wasSentByApi: false,
      sendFunction: '',
      sendPayload: null,
    });
    const call = newMessageFixture('igr-b', {
      id: 'id-CALL',
      messageId: 'CALL-1',
      chatId: chat,
      fromMe: false,
      messageType: 'CallMessage',
      callPeer: { jid: '5511900000001@s.whatsapp.net', name: 'Caller "one"', imagePreviewUrl: '' },
      aiMetadata: { agent: 'a1', tokens: 12 },
    });
    // Our own send, reserved before it went out: its copy merges into that row.
    await messages.upsert(newMessageFixture('igr-b', { id: 'id-OWN', messageId: 'OWN-1', chatId: chat, fromMe: true, status: 'Pending', raw: null }));
    const own = newMessageFixture('igr-b', {
      id: 'id-OWN-copy',
      messageId: 'OWN-1',
      chatId: chat,
      fromMe: true,
      status: 'Sent',
      text: 'copy text',
      raw: '{"own":1}',
    });
    const written = await db.dataSource.transaction((manager) =>
      new InboundGroupRepository(db.dataSource).within(manager).write({ copies: [received, call, own] }),
    );

    expect(written.copies.map((copy) => copy?.created)).toEqual([true, true, false]);
    // Every column in the type it is read back with, the table's times and record id included.
    expect(written.copies[0]?.row).toEqual(await messages.findOne('igr-b', 'RICH-1'));
    expect(written.copies[1]?.row).toEqual(await messages.findOne('igr-b', 'CALL-1'));
    const merged = await messages.findOne('igr-b', 'OWN-1');
    expect(written.copies[2]?.row).toEqual(merged);
    expect(merged).toMatchObject({ id: 'id-OWN', status: 'Sent', text: 'copy text', raw: '{"own":1}' });
    expect(written.copies[2]).toMatchObject({ advanced: true });
  });

  it('should plan each round statement once (its generic plan), not on every round', async () => {
    const leases = new LeaseRepository(db.dataSource);
    const held = await Promise.all(ids.map(async (id) => (await leases.claim(id, 'w-igr', 60_000))!));
    // Rounds of one to three rows of each kind, as they come: Postgres plans the first five for their
    // values, then keeps the generic plan unless it looks dearer than those. With the rows as arrays,
    // a plan for the actual sizes always looked cheaper, and every round was planned again (~1 ms).
    const statements = await LeaseRepository.fencedGroupTransaction(db.dataSource, held, async (manager) => {
      for (let n = 1; n <= 15; n++) {
        const size = 1 + (n % 3);
        const writes = round(n);
        await new InboundGroupRepository(db.dataSource).within(manager).write({
          statuses: Array.from({ length: size }, (_, k) => ({ instanceId: 'igr-a', messageIds: [`A${(n % 7) * 3 + k}`], status: 'Delivered' })),
          copies: Array.from({ length: size }, (_, k) => ({ ...writes.copies![0], id: `id-B${n}-${k}`, messageId: `B${n}-${k}` })),
          chats: writes.chats,
        });
      }
      return (await manager.query(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%s_input AS%'`)) as Array<{
        generic_plans: string;
        custom_plans: string;
      }>;
    });
    expect(statements).toHaveLength(1);
    expect(Number(statements[0].custom_plans)).toBeLessThanOrEqual(5);
    expect(Number(statements[0].generic_plans)).toBeGreaterThanOrEqual(8);
  });
});
