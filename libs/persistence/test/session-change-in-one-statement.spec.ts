import { FencedOutError, InstanceEntity, InstanceRepository, LeaseRepository, type Lease } from '@gw/persistence';
import { openTestDatabase, recordStatements, type TestDatabase } from '@gw/testing';

/**
 * InstanceRepository.applySessionChange (issue #38): a session's status change, fenced by its lease,
 * with its events, answered with the row as stored, in one statement (it was BEGIN, the proof, the
 * UPDATE, a re-read, the insert and COMMIT: six round trips, two of them at every connect).
 */
describe('InstanceRepository.applySessionChange', () => {
  let db: TestDatabase;
  let sut: InstanceRepository;
  let leases: LeaseRepository;
  let statements: string[] = [];

  const newInstance = async (id: string): Promise<Lease> => {
    await sut.create({ id, token: `token-${id}`, name: `name-${id}`, owner: '5531999' });
    return (await leases.claim(id, 'w1', 60_000))!;
  };
  const events = async (id: string) =>
    (await db.dataSource.query(`SELECT id::text, event_type, payload FROM outbox_events WHERE instance_id = $1 ORDER BY id`, [id])) as Array<{
      id: string;
      event_type: string;
      payload: Record<string, unknown>;
    }>;

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new InstanceRepository(db.dataSource);
    leases = new LeaseRepository(db.dataSource);
    statements = await recordStatements(db.dataSource);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await db.close();
  });
  beforeEach(() => statements.splice(0));

  it('should write the patch and the events in one statement and answer the row as stored, typed as the entity', async () => {
    const lease = await newInstance('i-change');
    const before = (await sut.findById('i-change'))!;
    const lastDisconnect = new Date('2026-12-02T10:00:00.123Z');
    statements.splice(0);

    const { entity, lastEventId } = await sut.applySessionChange(
      lease,
      { status: 'connecting', lastDisconnect, lastDisconnectReason: 'why', paired: true, pairingExpiresAt: null, profileName: undefined },
      [
        { eventType: 'connection', payload: { n: 1 } },
        { eventType: 'connection', payload: { n: 2 } },
      ],
    );

    expect(statements).toHaveLength(1);
    const stored = await events('i-change');
    expect(stored.map((row) => row.payload)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(lastEventId).toBe(stored[1].id);
    expect(entity).toBeInstanceOf(InstanceEntity);
    expect(entity).toEqual(await sut.findById('i-change'));
    expect(entity).toMatchObject({ status: 'connecting', lastDisconnect, lastDisconnectReason: 'why', paired: true, owner: '5531999', name: 'name-i-change' });
    expect(entity.updated.getTime()).toBeGreaterThanOrEqual(before.updated.getTime());
    expect(entity.created).toEqual(before.created);
  });

  it('should answer the row unchanged and no event id when there is nothing to write', async () => {
    const lease = await newInstance('i-nothing');
    const before = (await sut.findById('i-nothing'))!;

    const { entity, lastEventId } = await sut.applySessionChange(lease, {});

    expect(entity).toEqual(before);
    expect(lastEventId).toBeNull();
    expect(await events('i-nothing')).toEqual([]);
  });

  it('should write nothing, neither the row nor the events, for a worker whose lease was taken over', async () => {
    const stale = await newInstance('i-fenced');
    await db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = 'i-fenced'`);
    const heir = (await leases.claim('i-fenced', 'w2', 60_000))!;

    await expect(sut.applySessionChange(stale, { status: 'connected' }, [{ eventType: 'connection', payload: {} }])).rejects.toBeInstanceOf(FencedOutError);

    expect((await sut.findById('i-fenced'))!.status).toBe('disconnected');
    expect(await events('i-fenced')).toEqual([]);
    await expect(sut.applySessionChange(heir, { status: 'connected' })).resolves.toMatchObject({ entity: { status: 'connected' } });
  });

  it('should be fenced out once the instance is deleted (its lease goes with it)', async () => {
    const lease = await newInstance('i-deleted');
    await sut.delete('i-deleted');

    await expect(sut.applySessionChange(lease, { status: 'connected' }, [{ eventType: 'connection', payload: {} }])).rejects.toBeInstanceOf(FencedOutError);
  });

  describe('changes of many instances at once (a storm of logins, issue #38)', () => {
    it('should write each instance its own patch and events in fewer statements than changes, in order for one instance, and answer each its own row', async () => {
      const ids = ['i-many-1', 'i-many-2', 'i-many-3', 'i-many-4'];
      const own = await Promise.all(ids.map((id) => newInstance(id)));
      const expiresAt = new Date('2026-12-05T18:00:00.250Z');
      statements.splice(0);

      const answers = await Promise.all([
        ...own.map((lease, n) =>
          sut.applySessionChange(lease, { status: 'connecting', qrcode: `qr-${n}`, pairingExpiresAt: expiresAt }, [
            { eventType: 'connection', payload: { n, step: 'connecting' } },
          ]),
        ),
        // The same instance again, asked before the first was written: written after it.
        sut.applySessionChange(own[0], { status: 'connected', jid: '5531999@s.whatsapp.net', paired: true, qrcode: '', pairingExpiresAt: null }, [
          { eventType: 'connection', payload: { step: 'connected', a: 1 } },
          { eventType: 'connection', payload: { step: 'connected', a: 2 } },
        ]),
        // No patch, no event: the row as it is.
        sut.applySessionChange(own[3], {}),
      ]);

      // Six changes: the first two alone (two statements in flight at most), the rest grouped behind them.
      expect(statements.length).toBeLessThanOrEqual(5);
      for (const [n, id] of ids.entries()) {
        const stored = await events(id);
        const answer = answers[n];
        expect(answer.entity).toBeInstanceOf(InstanceEntity);
        expect(answer.entity.id).toBe(id);
        if (n === 0) continue;
        expect(stored.map((row) => row.payload)).toEqual([{ n, step: 'connecting' }]);
        expect(answer.lastEventId).toBe(stored[0].id);
        expect(answer.entity).toMatchObject({ status: 'connecting', qrcode: `qr-${n}`, pairingExpiresAt: expiresAt, owner: '5531999', name: `name-${id}` });
        expect(await sut.findById(id)).toMatchObject({ status: 'connecting', qrcode: `qr-${n}`, pairingExpiresAt: expiresAt });
      }
      // The instance changed twice: both in the order asked, its events too.
      const first = await events('i-many-1');
      expect(first.map((row) => row.payload)).toEqual([
        { n: 0, step: 'connecting' },
        { step: 'connected', a: 1 },
        { step: 'connected', a: 2 },
      ]);
      expect(answers[0].lastEventId).toBe(first[0].id);
      expect(answers[4].lastEventId).toBe(first[2].id);
      expect(answers[4].entity).toMatchObject({ status: 'connected', jid: '5531999@s.whatsapp.net', paired: true, qrcode: '', pairingExpiresAt: null });
      expect(await sut.findById('i-many-1')).toEqual(answers[4].entity);
      expect(answers[5].lastEventId).toBeNull();
    });

    it('should fence out only the instance whose lease was taken over, and not find only the one deleted, writing every other', async () => {
      const ids = ['i-mix-ok', 'i-mix-fenced', 'i-mix-gone', 'i-mix-ok2'];
      const [ok, stale, gone, ok2] = await Promise.all(ids.map((id) => newInstance(id)));
      await db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = 'i-mix-fenced'`);
      await leases.claim('i-mix-fenced', 'w2', 60_000);
      await sut.delete('i-mix-gone');
      // A first change in flight, so that the next four form one group behind it.
      const head = sut.applySessionChange(ok2, { status: 'connecting' });
      const settled = await Promise.allSettled(
        [ok, stale, gone, ok2].map((lease) =>
          sut.applySessionChange(lease, { status: 'connected' }, [{ eventType: 'connection', payload: { id: lease.instanceId } }]),
        ),
      );
      await head;

      // The four went in one statement of their own (none written again alone after a failed group).
      expect((sut as unknown as { sessionChanges: { stats: { fallbacks: number } } }).sessionChanges.stats.fallbacks).toBe(0);
      expect(settled[0]).toMatchObject({ status: 'fulfilled', value: { entity: { status: 'connected' } } });
      expect(settled[1]).toMatchObject({ status: 'rejected', reason: expect.any(FencedOutError) });
      expect(settled[2]).toMatchObject({ status: 'rejected', reason: expect.any(FencedOutError) });
      expect(settled[3]).toMatchObject({ status: 'fulfilled', value: { entity: { status: 'connected' } } });
      expect((await sut.findById('i-mix-fenced'))!.status).toBe('disconnected');
      expect(await events('i-mix-fenced')).toEqual([]);
      expect((await events('i-mix-ok')).map((row) => row.payload)).toEqual([{ id: 'i-mix-ok' }]);
      expect((await events('i-mix-ok2')).map((row) => row.payload)).toEqual([{ id: 'i-mix-ok2' }]);
    });

    it("should not hold other instances' changes behind one waiting for its row (an instance being deleted holds it)", async () => {
      const [stuck, free] = await Promise.all(['i-wait-locked', 'i-wait-free'].map((id) => newInstance(id)));
      const holder = db.dataSource.createQueryRunner();
      await holder.connect();
      await holder.startTransaction();
      try {
        await holder.query(`SELECT 1 FROM instances WHERE id = 'i-wait-locked' FOR UPDATE`);
        let stuckDone = false;
        const waiting = sut.applySessionChange(stuck, { status: 'connecting' }).then((answer) => ((stuckDone = true), answer));
        await new Promise((resolve) => setTimeout(resolve, 50));
        await expect(sut.applySessionChange(free, { status: 'connected' })).resolves.toMatchObject({ entity: { status: 'connected' } });
        expect(stuckDone).toBe(false);
        await holder.commitTransaction();
        await expect(waiting).resolves.toMatchObject({ entity: { status: 'connecting' } });
      } finally {
        if (holder.isTransactionActive) await holder.rollbackTransaction();
        await holder.release();
      }
    });
  });
});
