import { newMessageFixture, openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, LeaseRepository, MessageRepository, OutboundLedgerRepository, type Lease, type NewMessage } from '@gw/persistence';

/** reserveAndSettle(): a group's reserves and results in one statement (bench/send, issue #38). */
describe(`${OutboundLedgerRepository.name} reserveAndSettle`, () => {
  let db: TestDatabase;
  let leases: LeaseRepository;
  let messages: MessageRepository;
  let ledger: OutboundLedgerRepository;
  let lease: Lease;
  let stale: Lease;
  const instanceId = 'rledgerround';
  const staleId = 'rledgerroundstale';

  const outbound = (overrides: Partial<NewMessage> = {}): NewMessage =>
    newMessageFixture(instanceId, {
      messageId: `3EB0${Math.random().toString(16).slice(2).toUpperCase()}`,
      sender: '5511988880000@s.whatsapp.net',
      senderPn: '5511988880000@s.whatsapp.net',
      status: 'Pending',
      text: 'hello',
      content: 'hello',
      sendPayload: { text: 'hello' },
      ...overrides,
    });
  const statementsDuring = async (run: () => Promise<unknown>): Promise<number> => {
    let count = 0;
    const original = db.dataSource.query.bind(db.dataSource);
    db.dataSource.query = ((...call: Parameters<typeof original>) => {
      count++;
      return original(...call);
    }) as typeof original;
    try {
      await run();
    } finally {
      db.dataSource.query = original;
    }
    return count;
  };

  beforeAll(async () => {
    db = await openTestDatabase();
    leases = new LeaseRepository(db.dataSource);
    messages = new MessageRepository(db.dataSource);
    ledger = new OutboundLedgerRepository(db.dataSource);
    const instances = new InstanceRepository(db.dataSource);
    await instances.create({ id: instanceId, token: 'tok-ledger-round', name: 'round' });
    await instances.create({ id: staleId, token: 'tok-ledger-round-stale', name: 'round stale' });
    lease = (await leases.claim(instanceId, 'w-round', 60_000))!;
    stale = (await leases.claim(staleId, 'w-old', 1))!;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await leases.claim(staleId, 'w-new', 60_000);
  });
  afterAll(() => db.close());

  it('should reserve new sends and settle acked ones in one statement, each fenced by its own lease', async () => {
    const acked = outbound();
    const refused = outbound();
    const delivered = outbound();
    const relayedBefore = outbound();
    await ledger.reserveMany([
      { lease, message: relayedBefore, relay: true },
      { lease, message: acked, relay: true },
      { lease, message: refused, relay: true },
      { lease, message: delivered, relay: true },
    ]);
    await messages.advanceStatus(instanceId, [delivered.messageId], 'Delivered');
    const fresh = outbound();
    const typing = outbound({ text: 'typing first' });
    const repeat = outbound({ messageId: relayedBefore.messageId, text: 'again' });
    const fenced = outbound({ instanceId: staleId });

    let answer: Awaited<ReturnType<OutboundLedgerRepository['reserveAndSettle']>> | undefined;
    const statements = await statementsDuring(async () => {
      answer = await ledger.reserveAndSettle(
        [
          { lease, message: fresh, relay: true },
          { lease: stale, message: fenced, relay: true },
          { lease, message: typing, relay: false },
          { lease, message: repeat, relay: true },
        ],
        [
          { lease, messageId: acked.messageId, outcome: { status: 'Sent' } },
          { lease, messageId: refused.messageId, outcome: { status: 'Failed', error: 'ack error 479' } },
          { lease, messageId: delivered.messageId, outcome: { status: 'Sent' } },
          { lease: stale, messageId: fenced.messageId, outcome: { status: 'Sent' } },
        ],
      );
    });
    // One statement, and one more only to read back the row that was further along (as settleMany).
    expect(statements).toBe(2);
    expect(answer!.reserved).toEqual([
      { held: true, reserved: true },
      { held: false, reserved: false },
      { held: true, reserved: true },
      // Relayed before: not reserved again (the caller answers from the store).
      { held: true, reserved: false },
    ]);
    expect(answer!.settled.map((settled) => [settled.held, settled.row?.messageId, settled.row?.status, settled.row?.error])).toEqual([
      [true, acked.messageId, 'Sent', ''],
      [true, refused.messageId, 'Failed', 'ack error 479'],
      [true, delivered.messageId, 'Delivered', ''],
      [false, undefined, undefined, undefined],
    ]);
    expect(await messages.findOne(instanceId, fresh.messageId)).toMatchObject({ status: 'Pending', text: 'hello' });
    expect(await messages.findOne(instanceId, typing.messageId)).toMatchObject({ status: 'Pending', text: 'typing first' });
    expect((await messages.findOne(instanceId, relayedBefore.messageId))!.text).toBe('hello');
    expect(await messages.findOne(staleId, fenced.messageId)).toBeNull();
    const relayed = (await db.dataSource.query(
      `SELECT message_id, relayed_at IS NOT NULL AS relayed FROM messages WHERE instance_id = $1 AND message_id = ANY($2)`,
      [instanceId, [fresh.messageId, typing.messageId]],
    )) as Array<{ message_id: string; relayed: boolean }>;
    expect(Object.fromEntries(relayed.map((row) => [row.message_id, row.relayed]))).toEqual({ [fresh.messageId]: true, [typing.messageId]: false });
  });

  it('should lock no result row while its reserves wait for a row, and settle a held result row alone after', async () => {
    const busySettle = outbound();
    const waitingReserve = outbound({ status: 'Queued' });
    await ledger.reserveMany([{ lease, message: busySettle, relay: true }]);
    await messages.upsert(waitingReserve);
    const freeSettle = outbound();
    await ledger.reserveMany([{ lease, message: freeSettle, relay: true }]);
    // Another writer holds the queued row the reserve will wait for.
    const holder = db.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      await holder.query(`UPDATE messages SET updated_at = now() WHERE instance_id = $1 AND message_id = $2`, [instanceId, waitingReserve.messageId]);
      const round = ledger.reserveAndSettle(
        [{ lease, message: outbound({ messageId: waitingReserve.messageId, text: 'Ana' }), relay: true }],
        [{ lease, messageId: freeSettle.messageId, outcome: { status: 'Sent' } }],
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The round waits on the reserve's row; it has locked no result row yet: another writer takes it at once.
      const other = db.dataSource.createQueryRunner();
      await other.connect();
      try {
        await other.query(`SET lock_timeout = '1s'`);
        await other.startTransaction();
        await other.query(`SELECT 1 FROM messages WHERE instance_id = $1 AND message_id = $2 FOR UPDATE`, [instanceId, freeSettle.messageId]);
        await other.commitTransaction();
      } finally {
        if (other.isTransactionActive) await other.rollbackTransaction();
        await other.query(`RESET lock_timeout`);
        await other.release();
      }
      await holder.commitTransaction();
      const { reserved, settled } = await round;
      expect(reserved).toEqual([{ held: true, reserved: true }]);
      expect(settled.map((result) => [result.held, result.row?.status])).toEqual([[true, 'Sent']]);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
    expect(await messages.findOne(instanceId, waitingReserve.messageId)).toMatchObject({ status: 'Pending', text: 'Ana' });
  });
});
