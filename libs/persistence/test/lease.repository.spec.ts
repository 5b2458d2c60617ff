import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { AuthStateRepository, FencedOutError, InstanceRepository, LeaseRepository } from '@gw/persistence';

describe(LeaseRepository.name, () => {
  let db: TestDatabase;
  let sut: LeaseRepository;
  let instances: InstanceRepository;
  let auth: AuthStateRepository;

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new LeaseRepository(db.dataSource);
    instances = new InstanceRepository(db.dataSource);
    auth = new AuthStateRepository(db.dataSource);
  });
  afterAll(async () => {
    await sut.closeRenewal();
    await db.close();
  });

  const newInstance = async (id: string, extra: Record<string, unknown> = {}) => instances.create({ id, token: `token-${id}`, name: id, ...extra });

  describe('claim', () => {
    it('should give a free lease to exactly one of two workers', async () => {
      await newInstance('i-claim');
      const [a, b] = await Promise.all([sut.claim('i-claim', 'w1', 5000), sut.claim('i-claim', 'w2', 5000)]);
      expect([a, b].filter(Boolean)).toHaveLength(1);
    });

    it('should claim again when a first claim at the same moment beat it on the fencing key, and answer what that says', async () => {
      // The race itself is rare and timing-bound (two inserts before either sees the other; the loser then
      // fails on (instance_id, fencing_token), not on ON CONFLICT's instance_id): here the first try fails so.
      await newInstance('i-claim-race');
      const held = (await sut.claim('i-claim-race', 'w1', 5000))!;
      const raced = Object.assign(new Error('duplicate key value violates unique constraint "session_leases_fencing_key"'), {
        code: '23505',
        constraint: 'session_leases_fencing_key',
      });
      const query = jest.spyOn(db.dataSource, 'query').mockRejectedValueOnce(raced);
      try {
        expect(await sut.claim('i-claim-race', 'w2', 5000)).toBeNull();
        expect(await sut.claim('i-claim-race', 'w1', 5000)).toEqual(held);
        // Any other failure is the caller's.
        query.mockRejectedValueOnce(Object.assign(new Error('other'), { code: '23505', constraint: 'instances_pkey' }));
        await expect(sut.claim('i-claim-race', 'w1', 5000)).rejects.toThrow('other');
      } finally {
        query.mockRestore();
      }
    });
  });

  describe('claimMany (issue #38)', () => {
    it('should take in one statement what claim() would take of each, leave what another worker holds, and skip an instance that is gone', async () => {
      for (const id of ['i-many-free', 'i-many-lapsed', 'i-many-live', 'i-many-own', 'i-many-handed']) await newInstance(id);
      const lapsed = (await sut.claim('i-many-lapsed', 'w-gone', 50))!;
      await sut.claim('i-many-live', 'w-live', 60_000);
      const own = (await sut.claim('i-many-own', 'w-many', 60_000))!;
      const handed = (await sut.claim('i-many-handed', 'w-drained', 60_000))!;
      await sut.handOver([handed]);
      await new Promise((resolve) => setTimeout(resolve, 120));

      const query = jest.spyOn(db.dataSource, 'query');
      let taken: Map<string, { fencingToken: string; workerId: string }>;
      try {
        taken = await sut.claimMany(
          ['i-many-own', 'i-many-free', 'i-many-lapsed', 'i-many-live', 'i-many-handed', 'i-many-missing', 'i-many-free'],
          'w-many',
          5000,
        );
        expect(query).toHaveBeenCalledTimes(1);
      } finally {
        query.mockRestore();
      }
      expect([...taken.keys()].sort()).toEqual(['i-many-free', 'i-many-handed', 'i-many-lapsed', 'i-many-own']);
      expect(taken.get('i-many-free')).toEqual({ instanceId: 'i-many-free', workerId: 'w-many', fencingToken: '1' });
      // A change of holder bumps the token; our own live lease keeps it.
      expect(BigInt(taken.get('i-many-lapsed')!.fencingToken)).toBe(BigInt(lapsed.fencingToken) + 1n);
      expect(taken.get('i-many-own')!.fencingToken).toBe(own.fencingToken);
      expect((await sut.holderOf('i-many-live'))?.workerId).toBe('w-live');
      // The lapsed holder is fenced out.
      await expect(auth.write(lapsed, { creds: '{}' })).rejects.toBeInstanceOf(FencedOutError);
    });

    it("should leave another worker's lapsed row alone when told not to take lapsed leases", async () => {
      for (const id of ['i-many-grace-lapsed', 'i-many-grace-free']) await newInstance(id);
      await sut.claim('i-many-grace-lapsed', 'w-other', 50);
      await new Promise((resolve) => setTimeout(resolve, 120));
      const taken = await sut.claimMany(['i-many-grace-lapsed', 'i-many-grace-free'], 'w-back', 5000, { takeLapsed: false });
      expect([...taken.keys()]).toEqual(['i-many-grace-free']);
    });

    it('should give each instance to exactly one of two workers claiming overlapping batches at once', async () => {
      const ids = Array.from({ length: 40 }, (_, i) => `i-many-race-${String(i).padStart(2, '0')}`);
      for (const id of ids) await newInstance(id);
      const [a, b] = await Promise.all([sut.claimMany(ids, 'w-a', 5000), sut.claimMany([...ids].reverse(), 'w-b', 5000)]);
      expect([...a.keys(), ...b.keys()].sort()).toEqual(ids);
    });
  });

  describe('renewAll', () => {
    it('should renew only live leases of the worker', async () => {
      await newInstance('i-renew');
      await sut.claim('i-renew', 'w-renew', 5000);
      const held = await sut.renewAll('w-renew', 5000);
      expect([...held.keys()]).toEqual(['i-renew']);
      expect(await sut.renewAll('w-other', 5000)).toEqual(new Map());
    });
  });

  describe('renewOwn (issue #34)', () => {
    const lapse = (id: string) => db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = $1`, [id]);

    it('should renew the leases without bringing back the worker row when told not to heartbeat (a draining worker, issue #39)', async () => {
      await newInstance('i-own-drain');
      const held = (await sut.claim('i-own-drain', 'w-own-drain', 5000))!;
      await sut.renewOwn('w-own-drain', 3, 5000);
      await sut.removeWorker('w-own-drain');

      const renewed = await sut.renewOwn('w-own-drain', 3, 60_000, 5000, { heartbeat: false });

      expect(renewed).toEqual(new Map([['i-own-drain', held.fencingToken]]));
      expect(await db.dataSource.query(`SELECT id FROM session_workers WHERE id = 'w-own-drain'`)).toEqual([]);
      const [row]: Array<{ left: boolean }> = await db.dataSource.query(
        `SELECT expires_at > now() + interval '30 seconds' AS left FROM session_leases WHERE instance_id = 'i-own-drain'`,
      );
      expect(row.left).toBe(true);
    });

    it('should renew in one statement the worker heartbeat and every row of the worker, a lapsed one too, with its token', async () => {
      await newInstance('i-own-live');
      await newInstance('i-own-lapsed');
      const live = (await sut.claim('i-own-live', 'w-own', 5000))!;
      const lapsed = (await sut.claim('i-own-lapsed', 'w-own', 5000))!;
      await lapse('i-own-lapsed');

      const renewed = await sut.renewOwn('w-own', 7, 5000);

      expect(renewed).toEqual(
        new Map([
          ['i-own-live', live.fencingToken],
          ['i-own-lapsed', lapsed.fencingToken],
        ]),
      );
      expect(await sut.holderOf('i-own-lapsed')).toEqual(lapsed);
      const [worker] = await db.dataSource.query(`SELECT capacity FROM session_workers WHERE id = 'w-own'`);
      expect(worker.capacity).toBe(7);
    });

    it('should not take back a lapsed row another worker claimed meanwhile, nor one handed over', async () => {
      await newInstance('i-own-taken');
      await newInstance('i-own-given');
      await sut.claim('i-own-taken', 'w-late', 5000);
      const given = (await sut.claim('i-own-given', 'w-late', 5000))!;
      await lapse('i-own-taken');
      const heir = (await sut.claim('i-own-taken', 'w-heir', 5000))!;
      expect(await sut.handOver([given])).toBe(1);

      expect(await sut.renewOwn('w-late', 10, 5000)).toEqual(new Map());
      expect(await sut.holderOf('i-own-taken')).toEqual(heir);
      expect(await sut.holderOf('i-own-given')).toBeNull();
    });

    it('should keep working after its connection failed', async () => {
      await newInstance('i-own-reconnect');
      await sut.claim('i-own-reconnect', 'w-own-reconnect', 5000);
      await sut.renewOwn('w-own-reconnect', 1, 5000);
      // The server ends the renewal connection (a restart, a failover): the next renewal fails, the one after works.
      await db.dataSource.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database() AND state = 'idle' AND query LIKE 'WITH worker AS%'`,
      );
      await sut.renewOwn('w-own-reconnect', 1, 5000).catch(() => undefined);
      expect([...(await sut.renewOwn('w-own-reconnect', 1, 5000)).keys()]).toEqual(['i-own-reconnect']);
    });
  });

  describe('retakeOwn (issue #34)', () => {
    it('should give the rows of instances that still want a session a new token, at most the limit, and leave the others', async () => {
      await newInstance('i-retake-a', { paired: true, desiredState: 'connected' });
      await newInstance('i-retake-b', { paired: true, desiredState: 'connected' });
      await newInstance('i-retake-off', { paired: true, desiredState: 'disconnected' });
      const a = (await sut.claim('i-retake-a', 'w-retake', 5000))!;
      await sut.claim('i-retake-b', 'w-retake', 5000);
      await sut.claim('i-retake-off', 'w-retake', 5000);

      const retaken = await sut.retakeOwn('w-retake', ['i-retake-a', 'i-retake-b', 'i-retake-off'], 5000, 1);

      expect(retaken).toEqual([{ instanceId: 'i-retake-a', workerId: 'w-retake', fencingToken: String(Number(a.fencingToken) + 1) }]);
      // The old token is fenced out.
      await expect(auth.write(a, { creds: '{}' })).rejects.toBeInstanceOf(FencedOutError);
      await sut.releaseOwn('w-retake', ['i-retake-b', 'i-retake-off']);
      expect(await sut.holderOf('i-retake-b')).toBeNull();
      expect(await sut.holderOf('i-retake-off')).toBeNull();
      expect(await sut.holderOf('i-retake-a')).toEqual(retaken[0]);
    });
  });

  describe('handOver (issue #39)', () => {
    it('should end the lease at once but keep its row: claimable now with a new token, a takeover for the gateway, the old token fenced', async () => {
      await newInstance('i-hand', { paired: true, desiredState: 'connected' });
      await newInstance('i-hand-other');
      const lease = (await sut.claim('i-hand', 'w-drain', 60_000))!;
      const other = (await sut.claim('i-hand-other', 'w-other', 60_000))!;

      expect(await sut.handOver([lease, { ...other, workerId: 'w-drain' }])).toBe(1);

      expect(await sut.holderOf('i-hand')).toBeNull();
      expect(await sut.heldRecently('i-hand', 20_000)).toBe(true);
      expect(await sut.findOrphans(1000)).toContain('i-hand');
      await expect(auth.write(lease, { creds: '{}' })).rejects.toBeInstanceOf(FencedOutError);
      const heir = await sut.claim('i-hand', 'w-heir', 60_000);
      expect(heir).toEqual({ instanceId: 'i-hand', workerId: 'w-heir', fencingToken: String(Number(lease.fencingToken) + 1) });
      expect(await sut.holderOf('i-hand-other')).toEqual(other);
    });
  });

  describe('fencing', () => {
    it('should refuse auth-state writes from a worker whose lease was taken over', async () => {
      await newInstance('i-fence');
      const stale = (await sut.claim('i-fence', 'w1', 50))!;
      await auth.write(stale, { creds: '{"a":1}' });
      await new Promise((resolve) => setTimeout(resolve, 120));
      const fresh = (await sut.claim('i-fence', 'w2', 5000))!;
      await expect(auth.write(stale, { creds: '{"a":2}' })).rejects.toBeInstanceOf(FencedOutError);
      await auth.write(fresh, { creds: '{"a":3}', keys: [{ type: 'session', id: 'x', value: 'v' }] });
      expect(await auth.readCreds('i-fence')).toBe('{"a":3}');
      expect(await auth.readKeys('i-fence', 'session', ['x', 'y'])).toEqual(new Map([['x', 'v']]));
      await auth.write(fresh, { keys: [{ type: 'session', id: 'x', value: null }] });
      expect(await auth.readKeys('i-fence', 'session', ['x'])).toEqual(new Map());
    });
  });

  describe('a lapsed lease is lost when taken, not when it lapses (ADR 0037)', () => {
    it('should let the holder of a lapsed row nobody took write on, with every kind of fence, and refuse it once taken', async () => {
      await newInstance('i-lapsed');
      const lease = (await sut.claim('i-lapsed', 'w-rode', 50))!;
      await new Promise((resolve) => setTimeout(resolve, 120));
      expect(await sut.holderOf('i-lapsed')).toBeNull();

      await auth.write(lease, { creds: '{"rode":1}' });
      await LeaseRepository.fencedTransaction(db.dataSource, lease, async (manager) => manager.query('SELECT 1'));
      await LeaseRepository.fencedGroupTransaction(db.dataSource, [lease], async (_manager, held) => expect([...held]).toEqual(['i-lapsed']));
      expect(await auth.readCreds('i-lapsed')).toBe('{"rode":1}');

      const taker = (await sut.claim('i-lapsed', 'w-taker', 5000))!;
      expect(taker.fencingToken).toBe(String(Number(lease.fencingToken) + 1));
      await expect(auth.write(lease, { creds: '{"rode":2}' })).rejects.toBeInstanceOf(FencedOutError);
      expect(await auth.readCreds('i-lapsed')).toBe('{"rode":1}');
    });

    it("should leave another worker's lapsed row alone when told not to take lapsed leases, yet take a free row, our own and a handed-over one", async () => {
      for (const id of ['i-grace-lapsed', 'i-grace-free', 'i-grace-own', 'i-grace-handed']) await newInstance(id);
      const other = (await sut.claim('i-grace-lapsed', 'w-other', 50))!;
      const own = (await sut.claim('i-grace-own', 'w-back', 50))!;
      const handed = (await sut.claim('i-grace-handed', 'w-drained', 60_000))!;
      await sut.handOver([handed]);
      await new Promise((resolve) => setTimeout(resolve, 120));

      expect(await sut.claim('i-grace-lapsed', 'w-back', 5000, { takeLapsed: false })).toBeNull();
      expect(await sut.claim('i-grace-free', 'w-back', 5000, { takeLapsed: false })).toEqual(expect.objectContaining({ workerId: 'w-back' }));
      expect(await sut.claim('i-grace-own', 'w-back', 5000, { takeLapsed: false })).toEqual(expect.objectContaining({ workerId: 'w-back' }));
      expect(await sut.claim('i-grace-handed', 'w-back', 5000, { takeLapsed: false })).toEqual(expect.objectContaining({ workerId: 'w-back' }));
      // The lapsed row is still the other worker's: it renews it with its token, and writes on.
      expect((await sut.renewOwn('w-other', 10, 5000)).get('i-grace-lapsed')).toBe(other.fencingToken);
      await auth.write(other, { creds: '{}' });
      expect(own.workerId).toBe('w-back');
    });
  });

  describe('group commit of auth-state writes', () => {
    it('should write concurrent writes of several instances together, each fenced by its own lease, in order per instance', async () => {
      await Promise.all(['i-group-a', 'i-group-b', 'i-group-stale'].map((id) => newInstance(id)));
      const a = (await sut.claim('i-group-a', 'w1', 5000))!;
      const b = (await sut.claim('i-group-b', 'w1', 5000))!;
      const stale = (await sut.claim('i-group-stale', 'w1', 50))!;
      await new Promise((resolve) => setTimeout(resolve, 120));
      await sut.claim('i-group-stale', 'w2', 5000);

      const statements: string[] = [];
      const query = db.dataSource.query.bind(db.dataSource);
      const spy = jest.spyOn(db.dataSource, 'query').mockImplementation((text: string, params?: unknown) => {
        statements.push(text);
        return query(text, params as unknown[] | undefined);
      });
      try {
        const writes = await Promise.allSettled([
          auth.write(a, { creds: '{"a":1}', keys: [{ type: 'session', id: 'p1', value: 'a1' }] }),
          auth.write(b, {
            keys: [
              { type: 'session', id: 'p1', value: 'b1' },
              { type: 'pre-key', id: '7', value: 'k7' },
            ],
          }),
          auth.write(stale, { creds: '{"stale":1}', keys: [{ type: 'session', id: 'p1', value: 'stale' }] }),
          auth.write(a, { keys: [{ type: 'session', id: 'p1', value: 'a2' }] }),
          auth.write(b, { keys: [{ type: 'pre-key', id: '7', value: null }] }),
        ]);
        expect(writes.map((write) => write.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
        expect((writes[2] as PromiseRejectedResult).reason).toBeInstanceOf(FencedOutError);
      } finally {
        spy.mockRestore();
      }
      // The first write alone (nothing in flight), then the rest in two groups: one write per instance per statement.
      expect(statements).toHaveLength(3);
      expect(await auth.readCreds('i-group-a')).toBe('{"a":1}');
      expect(await auth.readKeys('i-group-a', 'session', ['p1'])).toEqual(new Map([['p1', 'a2']]));
      expect(await auth.readKeys('i-group-b', 'session', ['p1'])).toEqual(new Map([['p1', 'b1']]));
      expect(await auth.readKeys('i-group-b', 'pre-key', ['7'])).toEqual(new Map());
      expect(await auth.readCreds('i-group-stale')).toBeNull();
      expect(await auth.readKeys('i-group-stale', 'session', ['p1'])).toEqual(new Map());
    });
  });

  describe('fencedGroupTransaction', () => {
    it('should tell the work which leases still hold, and roll the whole group back when the work fails', async () => {
      await Promise.all(['i-gtx-a', "i-gtx'b", 'i-gtx-stale'].map((id) => newInstance(id)));
      const a = (await sut.claim('i-gtx-a', 'w1', 5000))!;
      const b = (await sut.claim("i-gtx'b", 'w1', 5000))!;
      const stale = (await sut.claim('i-gtx-stale', 'w1', 50))!;
      await new Promise((resolve) => setTimeout(resolve, 120));
      await sut.claim('i-gtx-stale', 'w2', 5000);
      const names = async () =>
        Object.fromEntries(
          ((await db.dataSource.query(`SELECT id, name FROM instances WHERE id LIKE 'i-gtx%'`)) as Array<{ id: string; name: string }>).map((row) => [
            row.id,
            row.name,
          ]),
        );
      const afterGroup = { 'i-gtx-a': 'grouped', "i-gtx'b": 'grouped', 'i-gtx-stale': 'i-gtx-stale' };

      const held = await LeaseRepository.fencedGroupTransaction(db.dataSource, [a, b, stale], async (manager, held) => {
        for (const id of held) await manager.query(`UPDATE instances SET name = 'grouped' WHERE id = $1`, [id]);
        return held;
      });
      expect(held).toEqual(new Set(['i-gtx-a', "i-gtx'b"]));
      expect(await names()).toEqual(afterGroup);

      await expect(
        LeaseRepository.fencedGroupTransaction(db.dataSource, [a, b], async (manager) => {
          await manager.query(`UPDATE instances SET name = 'half' WHERE id = $1`, ['i-gtx-a']);
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await names()).toEqual(afterGroup);
    });
  });

  describe('fencedTransaction', () => {
    it('should commit the work of the holder, and commit nothing for a worker whose lease was taken over', async () => {
      await newInstance("i-tx'quoted");
      const stale = (await sut.claim("i-tx'quoted", 'w1', 50))!;
      const name = async () => ((await db.dataSource.query(`SELECT name FROM instances WHERE id = $1`, ["i-tx'quoted"])) as Array<{ name: string }>)[0].name;

      expect(
        await LeaseRepository.fencedTransaction(db.dataSource, stale, (manager) =>
          manager.query(`UPDATE instances SET name = 'by-w1' WHERE id = $1`, ["i-tx'quoted"]).then(() => 'done'),
        ),
      ).toBe('done');
      expect(await name()).toBe('by-w1');

      await new Promise((resolve) => setTimeout(resolve, 120));
      const fresh = (await sut.claim("i-tx'quoted", 'w2', 5000))!;
      // The work starts before the proof's answer (pipelined behind it) and is rolled back, its events' insert with it.
      const tail = jest.fn();
      await expect(
        LeaseRepository.fencedTransaction(
          db.dataSource,
          stale,
          (manager) => manager.query(`UPDATE instances SET name = 'by-stale' WHERE id = $1`, ["i-tx'quoted"]),
          () => ({ text: `UPDATE instances SET name = 'by-stale-tail' WHERE id = $1`, values: ["i-tx'quoted"], rows: tail }),
        ),
      ).rejects.toBeInstanceOf(FencedOutError);
      expect(tail).not.toHaveBeenCalled();
      expect(await name()).toBe('by-w1');

      // A failing piece of work leaves nothing behind, and the connection goes back to the pool clean.
      await expect(
        LeaseRepository.fencedTransaction(db.dataSource, fresh, async (manager) => {
          await manager.query(`UPDATE instances SET name = 'half-written' WHERE id = $1`, ["i-tx'quoted"]);
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await name()).toBe('by-w1');
      await LeaseRepository.fencedTransaction(db.dataSource, fresh, (manager) =>
        manager.query(`UPDATE instances SET name = 'by-w2' WHERE id = $1`, ["i-tx'quoted"]),
      );
      expect(await name()).toBe('by-w2');
    });

    it('should not give a connection back to the pool inside an aborted transaction when the proof itself fails', async () => {
      await newInstance('i-tx-proof-fails');
      const lease = (await sut.claim('i-tx-proof-fails', 'w1', 5000))!;
      const aborted = async () =>
        (
          (await db.dataSource.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction (aborted)'`,
          )) as Array<{ n: number }>
        )[0].n;
      // The proof waits for a lock another connection holds, and is cancelled there: the batch fails after its START TRANSACTION.
      const proofCancelled = async (run: () => Promise<unknown>) => {
        const holder = db.dataSource.createQueryRunner();
        await holder.connect();
        await holder.query(`BEGIN`);
        await holder.query(`SELECT 1 FROM session_leases WHERE instance_id = 'i-tx-proof-fails' FOR UPDATE`);
        const outcome = run().then(
          () => 'resolved',
          (error: Error) => error.message,
        );
        for (let tries = 0; tries < 100; tries++) {
          const [{ n }]: Array<{ n: number }> = await db.dataSource.query(
            `SELECT count(pg_cancel_backend(pid))::int AS n FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR KEY SHARE%'`,
          );
          if (n > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await holder.query(`ROLLBACK`);
        await holder.release();
        return outcome;
      };
      expect(await proofCancelled(() => LeaseRepository.fencedTransaction(db.dataSource, lease, async () => 'written'))).toMatch(/cancel/);
      expect(await proofCancelled(() => LeaseRepository.fencedGroupTransaction(db.dataSource, [lease], async () => 'written'))).toMatch(/cancel/);
      expect(await aborted()).toBe(0);
    });
  });

  describe('lock semantics of the fence', () => {
    /** A fenced transaction that stays open (its lease proof held) until `release()`. */
    const openFenced = (lease: Awaited<ReturnType<LeaseRepository['claim']>>) => {
      let release!: () => void;
      let started!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const inside = new Promise<void>((resolve) => (started = resolve));
      const done = LeaseRepository.fencedTransaction(db.dataSource, lease!, async (manager) => {
        // The work starts before the proof's answer; the proof holds its lock once a statement behind it has run.
        await manager.query('SELECT 1');
        started();
        await gate;
      });
      return { inside, release, done };
    };
    const settledWithin = async (promise: Promise<unknown>, ms: number) =>
      Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

    it('should make a takeover wait until the holder’s fenced transaction committed (it was still the holder then)', async () => {
      await newInstance('i-lock-takeover');
      const stale = await sut.claim('i-lock-takeover', 'w-lock-old', 300);
      const open = openFenced(stale);
      await open.inside;
      // A renewal meanwhile (a non-key update of the row) keeps the fenced write's lock in place.
      expect([...(await sut.renewAll('w-lock-old', 300)).keys()]).toEqual(['i-lock-takeover']);
      await new Promise((resolve) => setTimeout(resolve, 400)); // the lease lapses while the transaction is open
      const takeover = sut.claim('i-lock-takeover', 'w-lock-new', 5000);
      expect(await settledWithin(takeover, 300)).toBe(false);
      open.release();
      await open.done;
      const fresh = await takeover;
      expect(BigInt(fresh!.fencingToken)).toBeGreaterThan(BigInt(stale!.fencingToken));
      await expect(LeaseRepository.fencedTransaction(db.dataSource, stale!, async () => undefined)).rejects.toBeInstanceOf(FencedOutError);
    });

    it('should let the holder renew its leases while its fenced writes are in progress (no stall behind them)', async () => {
      await newInstance('i-lock-renew');
      const lease = await sut.claim('i-lock-renew', 'w-renewing', 5000);
      const open = openFenced(lease);
      await open.inside;
      try {
        const renewed = sut.renewAll('w-renewing', 5000);
        expect(await settledWithin(renewed, 1000)).toBe(true);
        expect([...(await renewed).keys()]).toEqual(['i-lock-renew']);
        // And the proof still holds for the holder afterwards.
        expect(
          await settledWithin(
            LeaseRepository.fencedTransaction(db.dataSource, lease!, async () => 'ok'),
            1000,
          ),
        ).toBe(true);
      } finally {
        open.release();
        await open.done;
      }
    });
  });

  describe('findOrphans', () => {
    it('should list paired instances that want a session and have no live lease', async () => {
      await newInstance('i-orphan', { desiredState: 'connected', paired: true });
      await newInstance('i-unpaired', { desiredState: 'connected', paired: false });
      expect(await sut.findOrphans(10)).toContain('i-orphan');
      expect(await sut.findOrphans(10)).not.toContain('i-unpaired');
      await sut.claim('i-orphan', 'w1', 5000);
      expect(await sut.findOrphans(10)).not.toContain('i-orphan');
    });
  });
});
