import { capturingTx, executedPlan, newMessageFixture, openTestDatabase, rowsRead, type TestDatabase } from '@gw/testing';
import { InstanceRepository, LeaseRepository, MessageRepository, OutboundLedgerRepository, type Lease, type NewMessage } from '@gw/persistence';
import { UnackedSendsSeed1764510000001 } from '../src/migrations/1764510000001-unacked-sends-seed';

/**
 * The unacked sweep (UnackedSends, every 5 s on every worker) reads the sends waiting for their ack from
 * `unacked_sends`, never all of its instances' messages: before migration 1764510000000 it read every
 * message of every instance it held, each time (no index names `status`).
 */
describe('the unacked sweep', () => {
  let db: TestDatabase;
  let messages: MessageRepository;
  let ledger: OutboundLedgerRepository;
  let lease: Lease;
  const instanceId = 'runackedsweep';
  const HISTORY = 20_000;

  const outbound = (overrides: Partial<NewMessage> = {}): NewMessage =>
    newMessageFixture(instanceId, {
      messageId: `3EB0${Math.random().toString(16).slice(2).toUpperCase()}`,
      fromMe: true,
      status: 'Pending',
      text: 'hello',
      sendPayload: { text: 'hello' },
      ...overrides,
    });
  const listed = async () =>
    (
      (await db.dataSource.query(`SELECT message_id FROM unacked_sends WHERE instance_id = $1 ORDER BY message_id`, [instanceId])) as Array<{
        message_id: string;
      }>
    ).map((row) => row.message_id);
  const unacked = async () => (await messages.findUnacked([instanceId], 0, 500)).map((row) => row.messageId).sort();

  beforeAll(async () => {
    db = await openTestDatabase();
    messages = new MessageRepository(db.dataSource);
    ledger = new OutboundLedgerRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-unacked-sweep', name: 'u' });
    lease = (await new LeaseRepository(db.dataSource).claim(instanceId, 'w-unacked', 60_000))!;
    // An account's history: received and sent messages, all settled, none relayed by this gateway.
    await db.dataSource.query(
      `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, text, from_me)
       SELECT $1, 'sweephist' || g, 'SWEEPHIST' || g, '55119' || (g % 300) || '@s.whatsapp.net', 1764400000000 + g * 1000,
         CASE WHEN g % 2 = 0 THEN 'Read' ELSE '' END, 'message ' || g, g % 2 = 0
       FROM generate_series(1, ${HISTORY}) g`,
      [instanceId],
    );
    // A busy queue: 20,000 sends waiting (the sweep asks whether the queue still holds each message it answers).
    await db.dataSource.query(`INSERT INTO send_queue (instance_id, message_id, request) SELECT $1, 'QUEUED' || g, '{}' FROM generate_series(1, 20000) g`, [
      instanceId,
    ]);
    await db.dataSource.query(`ANALYZE messages`);
    await db.dataSource.query(`ANALYZE send_queue`);
  });
  afterAll(() => db.close());

  it('should list each send that went out, and nothing the account received or had before', async () => {
    const relayed = outbound();
    const reserved = outbound({ status: 'Pending' });
    await ledger.reserve(lease, relayed, true);
    await ledger.reserve(lease, reserved, false);
    expect(await listed()).toEqual([relayed.messageId]);
    expect(await unacked()).toEqual([relayed.messageId]);

    // A send with a typing delay: reserved first, relayed after.
    expect(await ledger.markRelayed(lease, reserved.messageId)).toBe('relayed');
    expect(await unacked()).toEqual([relayed.messageId, reserved.messageId].sort());
  });

  it('should drop a send from the list once it is acked, failed, unrelayed or deleted, when the sweep meets it', async () => {
    const acked = outbound();
    const failed = outbound();
    const unrelayed = outbound();
    const deleted = outbound({ chatId: '5511900000001@s.whatsapp.net' });
    const waiting = outbound();
    for (const message of [acked, failed, unrelayed, deleted, waiting]) await ledger.reserve(lease, message, true);
    await ledger.settle(lease, acked.messageId, { status: 'Sent' });
    await messages.fail(instanceId, [failed.messageId], 'refused');
    await ledger.unrelay(lease, unrelayed.messageId);
    await messages.deleteForChat(instanceId, [deleted.chatId]);
    // The deleted message's row went with it; the others wait for the sweep.
    expect(await listed()).not.toContain(deleted.messageId);
    expect(await listed()).toEqual(expect.arrayContaining([acked.messageId, failed.messageId, unrelayed.messageId, waiting.messageId]));

    const answered = await unacked();
    expect(answered).toContain(waiting.messageId);
    expect(answered).not.toEqual(expect.arrayContaining([acked.messageId]));
    expect(answered).not.toContain(failed.messageId);
    expect(answered).not.toContain(unrelayed.messageId);
    const left = await listed();
    expect(left).toContain(waiting.messageId);
    for (const gone of [acked, failed, unrelayed]) expect(left).not.toContain(gone.messageId);

    // Relayed again (the queue's next attempt): listed again.
    expect(await ledger.markRelayed(lease, unrelayed.messageId)).toBe('relayed');
    expect(await unacked()).toContain(unrelayed.messageId);
  });

  it('should answer the oldest first, with its age, its copy and whether the queue still holds it', async () => {
    const copy = outbound();
    await ledger.reserve(lease, copy, true);
    await ledger.keepCopy(lease, copy.messageId, '{"key":{"id":"x"}}');
    await db.dataSource.query(`UPDATE messages SET relayed_at = now() - interval '10 minutes' WHERE instance_id = $1 AND message_id = $2`, [
      instanceId,
      copy.messageId,
    ]);
    const [oldest] = await messages.findUnacked([instanceId], 60_000, 500);
    expect(oldest).toMatchObject({ instanceId, messageId: copy.messageId, chatId: copy.chatId, raw: '{"key":{"id":"x"}}', queued: false });
    expect(oldest.ageMs).toBeGreaterThanOrEqual(599_000);
    // Younger than asked: not answered.
    expect((await messages.findUnacked([instanceId], 60_000, 500)).map((row) => row.messageId)).toEqual([copy.messageId]);
  });

  it('should list, when migrating, the sends that were waiting for their ack before the list existed', async () => {
    const before = outbound();
    // Written by a version without the trigger.
    await db.dataSource.query(`ALTER TABLE messages DISABLE TRIGGER messages_unacked_send_insert`);
    try {
      await ledger.reserve(lease, before, true);
    } finally {
      await db.dataSource.query(`ALTER TABLE messages ENABLE TRIGGER messages_unacked_send_insert`);
    }
    expect(await listed()).not.toContain(before.messageId);
    const runner = db.dataSource.createQueryRunner();
    try {
      await new UnackedSendsSeed1764510000001().up(runner);
    } finally {
      await runner.release();
    }
    expect(await listed()).toContain(before.messageId);
    expect(await unacked()).toContain(before.messageId);
  });

  it("should read only the listed sends' rows of messages, not the instance's history", async () => {
    const { tx: capturing, captured } = capturingTx();
    await messages.within(capturing).findUnacked([instanceId], 0, 500);
    const [sql, parameters] = captured[0];
    const plan = await executedPlan(db.dataSource, sql, parameters);
    const listedRows = Number((await db.dataSource.query(`SELECT count(*)::int AS n FROM unacked_sends`))[0].n);
    // Every row a scan of `messages` produced or filtered out, over all its loops.
    const readFromMessages = rowsRead(plan, 'messages');
    expect(readFromMessages).toBeGreaterThan(0);
    expect(readFromMessages).toBeLessThanOrEqual(2 * listedRows + 10);
    expect(readFromMessages).toBeLessThan(HISTORY / 100);
    // Whether the queue holds each one: by its message, not every queued row.
    expect(rowsRead(plan, 'send_queue')).toBeLessThan(100);
  });
});
