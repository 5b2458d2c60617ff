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
});
