import { genericPlan, newMessageFixture, openTestDatabase, type TestDatabase } from '@gw/testing';
import { InstanceRepository, LeaseRepository, MessageRepository, OutboundLedgerRepository, type Lease, type NewMessage, type Tx } from '@gw/persistence';

describe(OutboundLedgerRepository.name, () => {
  let db: TestDatabase;
  let leases: LeaseRepository;
  let messages: MessageRepository;
  let ledger: OutboundLedgerRepository;
  let lease: Lease;
  const instanceId = 'rledgertest';

  const outbound = (overrides: Partial<NewMessage> = {}): NewMessage =>
    newMessageFixture(instanceId, {
      messageId: `3EB0${Math.random().toString(16).slice(2).toUpperCase()}`,
      sender: '5511988880000@s.whatsapp.net',
      senderPn: '5511988880000@s.whatsapp.net',
      status: 'Pending',
      text: 'hello',
      content: 'hello',
      sendPayload: { text: 'hello' },
      trackSource: 'crm',
      trackId: 't-1',
      ...overrides,
    });
  const relayedAt = async (messageId: string) =>
    (
      (await db.dataSource.query(`SELECT relayed_at FROM messages WHERE instance_id = $1 AND message_id = $2`, [instanceId, messageId])) as Array<{
        relayed_at: Date | null;
      }>
    )[0]?.relayed_at ?? null;

  beforeAll(async () => {
    db = await openTestDatabase();
    leases = new LeaseRepository(db.dataSource);
    messages = new MessageRepository(db.dataSource);
    ledger = new OutboundLedgerRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-ledger', name: 'ledger' });
    lease = (await leases.claim(instanceId, 'w-ledger', 60_000))!;
  });
  afterAll(() => db.close());

  it('should store and relay a new message in one statement, and refuse to relay its id again', async () => {
    const message = outbound();
    const first = await ledger.reserve(lease, message, true);
    expect(first).toEqual({ held: true, reserved: true });
    expect(await messages.findOne(instanceId, message.messageId)).toMatchObject({
      messageId: message.messageId,
      status: 'Pending',
      trackSource: 'crm',
      trackId: 't-1',
    });
    expect(await relayedAt(message.messageId)).not.toBeNull();

    const again = await ledger.reserve(lease, outbound({ messageId: message.messageId, text: 'changed' }), true);
    expect(again).toEqual({ held: true, reserved: false });
    expect((await messages.findOne(instanceId, message.messageId))!.text).toBe('hello');
  });

  it('should let a queued row keep its record id and take the send fields, relayed only when asked', async () => {
    const queued = outbound({ status: 'Queued', text: '{{name}}', trackId: '' });
    await messages.upsert(queued);
    const reserved = await ledger.reserve(lease, outbound({ messageId: queued.messageId, text: 'Ana', trackId: 't-2' }), false);
    expect(reserved).toEqual({ held: true, reserved: true });
    expect(await messages.findOne(instanceId, queued.messageId)).toMatchObject({ id: queued.id, status: 'Pending', text: 'Ana', trackId: 't-2' });
    expect(await relayedAt(queued.messageId)).toBeNull();

    expect(await ledger.markRelayed(lease, queued.messageId)).toBe('relayed');
    expect(await relayedAt(queued.messageId)).not.toBeNull();
    // A second request with the same id, reserved during the first one's typing delay, does not relay it again.
    expect(await ledger.markRelayed(lease, queued.messageId)).toBe('already');
  });

  it('should settle Sent only forward, and not fail a message that was delivered', async () => {
    const message = outbound();
    await ledger.reserve(lease, message, true);
    expect((await ledger.settle(lease, message.messageId, { status: 'Sent' })).row!.status).toBe('Sent');

    await messages.advanceStatus(instanceId, [message.messageId], 'Delivered');
    expect((await ledger.settle(lease, message.messageId, { status: 'Sent' })).row!.status).toBe('Delivered');
    const failed = await ledger.settle(lease, message.messageId, { status: 'Failed', error: 'late error' });
    expect(failed.row).toMatchObject({ status: 'Delivered', error: '' });

    const other = outbound();
    await ledger.reserve(lease, other, true);
    const refused = await ledger.settle(lease, other.messageId, { status: 'Failed', error: 'ack error 479' });
    expect(refused.row).toMatchObject({ status: 'Failed', error: 'ack error 479' });
  });

  it('should answer with the row as a write it waited for left it', async () => {
    const message = outbound();
    await ledger.reserve(lease, message, true);
    const runner = db.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      // Another writer (the server ack, a receipt) holds the row when the send's result comes.
      await runner.query(`UPDATE messages SET status = 'Delivered' WHERE instance_id = $1 AND message_id = $2`, [instanceId, message.messageId]);
      const settling = ledger.settle(lease, message.messageId, { status: 'Sent' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await runner.commitTransaction();
      expect((await settling).row!.status).toBe('Delivered');
    } finally {
      await runner.release();
    }
  });

  it('should mark server acks Sent for our own messages only', async () => {
    const mine = outbound();
    const theirs = outbound({ fromMe: false, status: '' });
    await ledger.reserve(lease, mine, true);
    await messages.upsert(theirs);
    expect(await ledger.acked(lease, [mine.messageId, theirs.messageId])).toBe(true);
    expect((await messages.findOne(instanceId, mine.messageId))!.status).toBe('Sent');
    expect((await messages.findOne(instanceId, theirs.messageId))!.status).toBe('');
  });

  it('should let a send cut off before its copy be taken over (relayed again), and nothing else', async () => {
    const cut = outbound();
    await ledger.reserve(lease, cut, true);
    const first = (await relayedAt(cut.messageId))!;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await ledger.reclaimCutOff(lease, cut.messageId)).toBe('reclaimed');
    expect((await relayedAt(cut.messageId))!.getTime()).toBeGreaterThan(first.getTime());
    // Never relayed (a typing delay not over yet), or with its copy stored, or acked: left as it is.
    const reserved = outbound();
    await ledger.reserve(lease, reserved, false);
    expect(await ledger.reclaimCutOff(lease, reserved.messageId)).toBe('not');
    expect(await relayedAt(reserved.messageId)).toBeNull();
    const copied = outbound();
    await ledger.reserve(lease, copied, true);
    expect(await ledger.keepCopy(lease, copied.messageId, '{"key":{}}')).toBe(true);
    expect(await ledger.reclaimCutOff(lease, copied.messageId)).toBe('not');
    const acked = outbound();
    await ledger.reserve(lease, acked, true);
    await ledger.settle(lease, acked.messageId, { status: 'Sent' });
    expect(await ledger.reclaimCutOff(lease, acked.messageId)).toBe('not');
  });

  it('should write nothing for a worker whose lease was taken over', async () => {
    const fencedId = 'rledgerfenced';
    await new InstanceRepository(db.dataSource).create({ id: fencedId, token: 'tok-ledger-fenced', name: 'fenced' });
    const stale = (await leases.claim(fencedId, 'w-old', 1))!;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const current = (await leases.claim(fencedId, 'w-new', 60_000))!;
    expect(current.fencingToken).not.toBe(stale.fencingToken);

    const message = outbound({ instanceId: fencedId });
    expect(await ledger.reserve(stale, message, true)).toEqual({ held: false, reserved: false });
    expect(await messages.findOne(fencedId, message.messageId)).toBeNull();

    await ledger.reserve(current, message, true);
    expect((await ledger.settle(stale, message.messageId, { status: 'Sent' })).held).toBe(false);
    expect(await ledger.acked(stale, [message.messageId])).toBe(false);
    expect(await ledger.markRelayed(stale, message.messageId)).toBe('fenced');
    expect(await ledger.reclaimCutOff(stale, message.messageId)).toBe('fenced');
    expect((await messages.findOne(fencedId, message.messageId))!.status).toBe('Pending');
  });

  describe('a send whose record id is taken in the instance (the table gives it a fresh one, ADR 0040)', () => {
    const otherId = 'rledgertaken';
    let otherLease: Lease;
    const fresh = /^r[0-9a-f]{7}$/;
    const idOf = async (instance: string, messageId: string) => (await messages.findOne(instance, messageId))?.id;

    beforeAll(async () => {
      await new InstanceRepository(db.dataSource).create({ id: otherId, token: 'tok-ledger-taken', name: 'taken' });
      otherLease = (await leases.claim(otherId, 'w-ledger', 60_000))!;
    });

    it('reserve: should store it under a fresh id that the result answers, the other instance and a queued row keeping theirs', async () => {
      await messages.upsert(outbound({ id: 'rtakenl1' }));
      const message = outbound({ id: 'rtakenl1' });
      expect(await ledger.reserve(lease, message, true)).toEqual({ held: true, reserved: true });
      const { row } = await ledger.settle(lease, message.messageId, { status: 'Sent' });
      expect(row!.id).toMatch(fresh);
      expect(row!.id).not.toBe('rtakenl1');
      expect(await idOf(instanceId, message.messageId)).toBe(row!.id);

      const elsewhere = outbound({ instanceId: otherId, id: 'rtakenl1' });
      expect(await ledger.reserve(otherLease, elsewhere, true)).toEqual({ held: true, reserved: true });
      expect((await ledger.settle(otherLease, elsewhere.messageId, { status: 'Sent' })).row!.id).toBe('rtakenl1');

      // The async queue's row, reserved by its send with the same ids (ON CONFLICT on the message id): its id stays.
      const queued = outbound({ id: 'rqueuel1', status: 'Queued' });
      await messages.upsert(queued);
      expect(await ledger.reserve(lease, { ...queued, status: 'Pending' }, true)).toEqual({ held: true, reserved: true });
      expect((await ledger.settle(lease, queued.messageId, { status: 'Sent' })).row).toMatchObject({ id: 'rqueuel1', status: 'Sent' });
    });

    it('reserveMany: should store each taken id (in the table or earlier in the group) under a fresh one that the results answer', async () => {
      await messages.upsert(outbound({ id: 'rtakenl2' }));
      const group = [
        outbound({ id: 'rtakenl2' }),
        outbound({ id: 'rgroupl2' }),
        outbound({ id: 'rgroupl2' }),
        outbound({ instanceId: otherId, id: 'rtakenl2' }),
      ];
      const reserved = await ledger.reserveMany(group.map((message) => ({ lease: message.instanceId === otherId ? otherLease : lease, message, relay: true })));
      expect(reserved).toEqual(group.map(() => ({ held: true, reserved: true })));
      const settled = await ledger.settleMany(
        group.map((message) => ({
          lease: message.instanceId === otherId ? otherLease : lease,
          messageId: message.messageId,
          outcome: { status: 'Sent' as const },
        })),
      );
      const ids = settled.map((result) => result.row!.id);
      for (const [index, message] of group.entries()) expect(await idOf(message.instanceId, message.messageId)).toBe(ids[index]);
      expect(ids[0]).toMatch(fresh);
      expect(ids[0]).not.toBe('rtakenl2');
      expect([ids[1], ids[2]]).toContain('rgroupl2');
      expect(ids[1]).not.toBe(ids[2]);
      expect(ids.filter((id) => id !== 'rgroupl2' && id !== 'rtakenl2')).toHaveLength(2);
      expect(ids[3]).toBe('rtakenl2');
    });
  });

  describe('group commit (reserveMany, settleMany)', () => {
    let other: Lease;
    let stale: Lease;
    const otherId = 'rledgermany';
    const staleId = 'rledgermanystale';

    beforeAll(async () => {
      const instances = new InstanceRepository(db.dataSource);
      await instances.create({ id: otherId, token: 'tok-ledger-many', name: 'many' });
      await instances.create({ id: staleId, token: 'tok-ledger-many-stale', name: 'many stale' });
      other = (await leases.claim(otherId, 'w-ledger', 60_000))!;
      stale = (await leases.claim(staleId, 'w-old', 1))!;
      await new Promise((resolve) => setTimeout(resolve, 20));
      await leases.claim(staleId, 'w-new', 60_000);
    });

    it('should reserve sends of several instances in one statement, each fenced by its own lease', async () => {
      const relayed = outbound();
      const delayed = outbound({ text: 'typing first' });
      const second = outbound({ instanceId: otherId });
      const fenced = outbound({ instanceId: staleId });
      const results = await ledger.reserveMany([
        { lease, message: relayed, relay: true },
        { lease: stale, message: fenced, relay: true },
        { lease, message: delayed, relay: false },
        { lease: other, message: second, relay: true },
      ]);
      expect(results.map((result) => result.held)).toEqual([true, false, true, true]);
      expect(results.map((result) => result.reserved)).toEqual([true, false, true, true]);
      expect(await messages.findOne(instanceId, relayed.messageId)).toMatchObject({
        instanceId,
        status: 'Pending',
        trackSource: 'crm',
        trackId: 't-1',
        sendPayload: { text: 'hello' },
        fromMe: true,
      });
      expect(await messages.findOne(instanceId, delayed.messageId)).toMatchObject({ instanceId, status: 'Pending', text: 'typing first' });
      expect(await messages.findOne(otherId, second.messageId)).toMatchObject({ instanceId: otherId, status: 'Pending' });
      expect(await relayedAt(relayed.messageId)).not.toBeNull();
      expect(await relayedAt(delayed.messageId)).toBeNull();
      expect(await messages.findOne(staleId, fenced.messageId)).toBeNull();

      // The row a group writes is the row reserve() writes alone.
      const alone = outbound();
      expect(await ledger.reserve(lease, alone, true)).toEqual({ held: true, reserved: true });
      const single = (await messages.findOne(instanceId, alone.messageId))!;
      const grouped = (await messages.findOne(instanceId, relayed.messageId))!;
      const comparable = (row: typeof single) => ({ ...row, id: '', messageId: '', createdAt: null, updatedAt: null, messageTimestamp: 0 });
      expect(comparable(grouped)).toEqual(comparable(single));
    });

    it("should go out prepared, and read messages by their key in the generic plans (the sends' group commit)", async () => {
      // A busy instance's messages, analyzed: a generic plan that read them by the instance alone would show.
      await db.dataSource.query(
        `INSERT INTO messages (instance_id, id, message_id, chat_id, message_timestamp, status, text)
         SELECT $1, 'ledgerplan' || g, 'LEDGERPLAN' || g, '55119' || (g % 300) || '@s.whatsapp.net', 1764400000000 + g, 'Read', 'm' FROM generate_series(1, 20000) g`,
        [otherId],
      );
      await db.dataSource.query(`ANALYZE messages`);
      const captured: Array<[string, unknown[]]> = [];
      const capturing = { query: async <T>(sql: string, parameters?: unknown[]) => (captured.push([sql, parameters ?? []]), [] as T) } as unknown as Tx;
      const message = outbound();
      await ledger.within(capturing).reserveMany([{ lease, message, relay: true }]);
      await ledger.within(capturing).settleMany([{ lease, messageId: message.messageId, outcome: { status: 'Sent' } }]);
      expect(captured).toHaveLength(2);
      for (const [sql, parameters] of captured) {
        expect(sql).toContain('/* prepared */');
        const plan = await genericPlan(db.dataSource, sql, parameters);
        expect(plan).not.toMatch(/Seq Scan on messages\b|messages_chat|messages_created/);
      }
      // settleMany finds each message by its key.
      expect(await genericPlan(db.dataSource, captured[1][0], captured[1][1])).toMatch(/messages_instance_id_message_id_key/);
    });

    it('should relay an id at most once in a group too: a repeat answers no row', async () => {
      const message = outbound();
      await ledger.reserve(lease, message, true);
      const fresh = outbound();
      const results = await ledger.reserveMany([
        { lease, message: outbound({ messageId: message.messageId, text: 'again' }), relay: true },
        { lease, message: fresh, relay: true },
      ]);
      expect(results).toEqual([
        { held: true, reserved: false },
        { held: true, reserved: true },
      ]);
      expect(await messages.findOne(instanceId, fresh.messageId)).toMatchObject({ messageId: fresh.messageId, status: 'Pending' });
      expect((await messages.findOne(instanceId, message.messageId))!.text).toBe('hello');
    });

    it('should settle a group forward only, read back what was further along, and write nothing for a stale lease', async () => {
      const sent = outbound();
      const refused = outbound({ instanceId: otherId });
      const delivered = outbound();
      const fenced = outbound({ instanceId: staleId });
      await ledger.reserveMany([
        { lease, message: sent, relay: true },
        { lease: other, message: refused, relay: true },
        { lease, message: delivered, relay: true },
      ]);
      await messages.advanceStatus(instanceId, [delivered.messageId], 'Delivered');
      const results = await ledger.settleMany([
        { lease, messageId: sent.messageId, outcome: { status: 'Sent' } },
        { lease: other, messageId: refused.messageId, outcome: { status: 'Failed', error: 'ack error 479' } },
        { lease, messageId: delivered.messageId, outcome: { status: 'Failed', error: 'late error' } },
        { lease: stale, messageId: fenced.messageId, outcome: { status: 'Sent' } },
      ]);
      expect(results.map((result) => result.held)).toEqual([true, true, true, false]);
      expect(results.map((result) => [result.row?.status, result.row?.error])).toEqual([
        ['Sent', ''],
        ['Failed', 'ack error 479'],
        ['Delivered', ''],
        [undefined, undefined],
      ]);
    });

    it('should settle the rows it can lock at once together, and a row another transaction holds alone after, holding nothing meanwhile', async () => {
      const free = outbound();
      const busy = outbound();
      await ledger.reserveMany([
        { lease, message: free, relay: true },
        { lease, message: busy, relay: true },
      ]);
      // Another writer (the inbound group transaction) holds the busy row.
      const holder = db.dataSource.createQueryRunner();
      await holder.connect();
      await holder.startTransaction();
      try {
        await holder.query(`UPDATE messages SET updated_at = now() WHERE instance_id = $1 AND message_id = $2`, [instanceId, busy.messageId]);
        let done = false;
        const settling = ledger
          .settleMany([
            { lease, messageId: busy.messageId, outcome: { status: 'Sent' } },
            { lease, messageId: free.messageId, outcome: { status: 'Sent' } },
          ])
          .finally(() => (done = true));
        // The free row is settled and committed while the busy one still waits: the group held no lock on it meanwhile.
        const deadline = Date.now() + 5_000;
        while ((await messages.findOne(instanceId, free.messageId))?.status !== 'Sent' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect((await messages.findOne(instanceId, free.messageId))?.status).toBe('Sent');
        expect(done).toBe(false);
        await holder.commitTransaction();
        const results = await settling;
        expect(results.map((result) => [result.held, result.row?.messageId, result.row?.status])).toEqual([
          [true, busy.messageId, 'Sent'],
          [true, free.messageId, 'Sent'],
        ]);
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
      }
    });
  });
});
