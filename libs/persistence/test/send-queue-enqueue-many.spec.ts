import { newMessageFixture, openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, MessageRepository, SendQueueRepository, type MessageRow, type NewMessage } from '@gw/persistence';

/**
 * enqueueMany writes a group as two JSON documents (or, for values JSON would change, one parameter
 * per value): the rows must read back exactly as the one-send path (`enqueue`, one parameter per
 * value) writes them, and the queue rows must keep the given order.
 */
describe(`${SendQueueRepository.name}.enqueueMany`, () => {
  let db: TestDatabase;
  let queue: SendQueueRepository;
  let messages: MessageRepository;
  let serial = 0;

  const send = (instanceId: string, overrides: Partial<NewMessage> = {}): NewMessage => {
    serial++;
    return newMessageFixture(instanceId, {
      id: `r${(0x1000000 + serial).toString(16)}`,
      messageId: `3EB0MANY${serial}`,
      sender: '5511988880000@s.whatsapp.net',
      senderPn: '5511988880000@s.whatsapp.net',
      messageType: 'ExtendedTextMessage',
      messageTimestamp: 1_763_800_000_000 + serial,
      status: 'Queued',
      text: 'quote " backslash \\ newline \n accent é emoji 🎉 tab \t',
      content: { extendedTextMessage: { text: 'hi "there"', contextInfo: { mentionedJid: ['a@s.whatsapp.net'] } } },
      sendPayload: { number: '5511999990000', text: 'hi', async: true, nested: { list: [1, 'two', null, false] } },
      trackSource: 'crm',
      trackId: `t-${serial}`,
      ...overrides,
    });
  };
  const request = (message: NewMessage) => ({
    instanceId: message.instanceId,
    messageId: message.messageId,
    content: { kind: 'text', text: message.text },
    delayMs: 0,
    mentions: [],
  });
  /** What a stored row says, without what differs between two sends by construction. */
  const stored = (row: MessageRow | null) => {
    expect(row).not.toBeNull();
    const { instanceId, id, messageId, messageTimestamp, trackId, createdAt, updatedAt, ...rest } = row as MessageRow;
    void [instanceId, id, messageId, messageTimestamp, trackId, createdAt, updatedAt];
    return rest;
  };
  const queued = async (instanceId: string) =>
    (await db.dataSource.query(`SELECT message_id, request FROM send_queue WHERE instance_id = $1 ORDER BY id`, [instanceId])) as Array<{
      message_id: string;
      request: unknown;
    }>;

  beforeAll(async () => {
    db = await openTestDatabase();
    queue = new SendQueueRepository(db.dataSource);
    messages = new MessageRepository(db.dataSource);
    const instances = new InstanceRepository(db.dataSource);
    for (const id of ['rmanya', 'rmanyb', 'rmanyc', 'rmanyd', 'rtakenqa', 'rtakenqb']) await instances.create({ id, token: `tok-${id}`, name: id });
  });
  afterAll(() => db.close());

  it('should store a group exactly as single sends are stored, and queue it in the given order', async () => {
    const variants: Array<Partial<NewMessage>> = [
      {},
      { content: 'a JSON string', sendPayload: null, chatLid: '1234@lid', isGroup: true },
      { text: '', content: null, quoted: '3EB0QUOTED', pinned: true },
    ];
    const group = [send('rmanya', variants[0]), send('rmanyb', variants[1]), send('rmanya', variants[2]), send('rmanyb', variants[0])];
    const answered = await queue.enqueueMany(group.map((message) => ({ message, request: request(message) })));

    expect(answered.map((row) => row.messageId)).toEqual(group.map((message) => message.messageId));
    for (const [index, message] of group.entries()) {
      const alone = send('rmanyc', variants[index % 3]);
      await queue.enqueue(alone, request(alone));
      expect(stored(await messages.findOne(message.instanceId, message.id))).toEqual(stored(await messages.findOne('rmanyc', alone.id)));
      expect(answered[index].createdAt).toBeInstanceOf(Date);
    }
    expect(await queued('rmanya')).toEqual([group[0], group[2]].map((message) => ({ message_id: message.messageId, request: request(message) })));
    expect(await queued('rmanyb')).toEqual([group[1], group[3]].map((message) => ({ message_id: message.messageId, request: request(message) })));
    const lanes = (await db.dataSource.query(`SELECT instance_id FROM send_lanes WHERE instance_id IN ('rmanya', 'rmanyb') ORDER BY instance_id`)) as Array<{
      instance_id: string;
    }>;
    expect(lanes.map((lane) => lane.instance_id)).toEqual(['rmanya', 'rmanyb']);
  });

  it('should store values JSON would change (a Date in a text column) as a parameter does', async () => {
    const when = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
    const group = [send('rmanyd', { quoted: when as unknown as string }), send('rmanyd')];
    await queue.enqueueMany(group.map((message) => ({ message, request: request(message) })));
    const alone = send('rmanyc', { quoted: when as unknown as string });
    await queue.enqueue(alone, request(alone));

    const quoted = (await messages.findOne('rmanyd', group[0].id))?.quoted;
    expect(quoted).not.toBe(JSON.parse(JSON.stringify(when)));
    expect(quoted).toBe((await messages.findOne('rmanyc', alone.id))?.quoted);
    expect((await queued('rmanyd')).map((row) => row.message_id)).toEqual(group.map((message) => message.messageId));
  });
  const writes: Array<[string, (group: NewMessage[]) => Promise<MessageRow[]>]> = [
    [
      'enqueue',
      async (group) => {
        const rows: MessageRow[] = [];
        for (const message of group) rows.push(await queue.enqueue(message, request(message)));
        return rows;
      },
    ],
    ['enqueueMany (JSON)', (group) => queue.enqueueMany(group.map((message) => ({ message, request: request(message) })))],
    [
      'enqueueMany (parameters)',
      (group) =>
        queue.enqueueMany(
          group.map((message, index) => ({ message: index ? message : { ...message, quoted: new Date() as unknown as string }, request: request(message) })),
        ),
    ],
  ];
  it.each(writes.map(([name, write], n) => [name, `rtakq${n}00`, `rdupq${n}00`, write] as const))(
    '%s: should store a send whose record id is taken (in the table or earlier in the group) under a fresh id and answer it (ADR 0040)',
    async (_name, taken, dup, write) => {
      await messages.upsert(send('rtakenqa', { id: taken }));
      const group = [send('rtakenqa', { id: taken }), send('rtakenqa', { id: dup }), send('rtakenqa', { id: dup }), send('rtakenqb', { id: taken })];
      const answered = await write(group);
      expect(answered.map((row) => row.messageId)).toEqual(group.map((message) => message.messageId));
      const ids = answered.map((row) => row.id);
      for (const [index, message] of group.entries()) expect((await messages.findOne(message.instanceId, message.messageId))!.id).toBe(ids[index]);
      expect(ids[0]).toMatch(/^r[0-9a-f]{7}$/);
      expect(ids[0]).not.toBe(taken);
      expect([ids[1], ids[2]]).toContain(dup);
      expect(ids[1]).not.toBe(ids[2]);
      expect(ids[3]).toBe(taken);
      expect((await queued('rtakenqa')).slice(-3).map((row) => row.message_id)).toEqual(group.slice(0, 3).map((message) => message.messageId));
    },
  );
});
