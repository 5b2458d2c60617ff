import { InstanceRepository, LeaseRepository, type Lease } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import pino from 'pino';
import { LeaseKeeper, type LeaseListener } from '../src/lease/lease-keeper';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

class RecordingListener implements LeaseListener {
  readonly adopted: string[] = [];
  readonly lost: string[] = [];
  leaseLost(instanceId: string): void {
    this.lost.push(instanceId);
  }
  async orphansClaimed(leases: Lease[]): Promise<void> {
    this.adopted.push(...leases.map((lease) => lease.instanceId));
  }
}

describe(LeaseKeeper.name, () => {
  let db: TestDatabase;
  let instances: InstanceRepository;
  const keepers: LeaseKeeper[] = [];
  const logger = pino({ level: 'silent' });
  let prefix = 0;

  beforeAll(async () => {
    db = await openTestDatabase();
    instances = new InstanceRepository(db.dataSource);
  });
  afterEach(async () => {
    await Promise.all(keepers.splice(0).map((keeper) => keeper.shutdown()));
    // every test starts from an empty instance table
    await db.dataSource.query('DELETE FROM instances');
    await db.dataSource.query('DELETE FROM session_workers');
  });
  afterAll(() => db.close());

  const pairedInstances = async (count: number): Promise<string[]> => {
    prefix += 1;
    const ids = Array.from({ length: count }, (_, i) => `p${prefix}-${String(i).padStart(2, '0')}`);
    for (const id of ids) await instances.create({ id, token: `t-${id}`, name: id, paired: true, desiredState: 'connected' });
    return ids;
  };

  const keeper = (
    workerId: string,
    options: { capacity?: number; ttlMs?: number; reconcileIntervalMs?: number; firstReconcileDelayMs?: number } = {},
    repository = new LeaseRepository(db.dataSource),
  ) => {
    const sut = new LeaseKeeper(
      repository,
      {
        workerId,
        capacity: options.capacity ?? 100,
        ttlMs: options.ttlMs ?? 10_000,
        reconcileIntervalMs: options.reconcileIntervalMs ?? 60_000,
        firstReconcileDelayMs: options.firstReconcileDelayMs,
      },
      logger,
    );
    keepers.push(sut);
    return sut;
  };

  describe('reconcile', () => {
    it('should give each orphan to exactly one of two keepers and spread them evenly', async () => {
      const ids = await pairedInstances(10);
      const [a, b] = [keeper('w-a'), keeper('w-b')];
      const [la, lb] = [new RecordingListener(), new RecordingListener()];
      await Promise.all([a.start(la), b.start(lb)]);
      await Promise.all([a.reconcileNow(), b.reconcileNow()]);

      expect([...la.adopted, ...lb.adopted].sort()).toEqual(ids);
      expect(la.adopted.filter((id) => lb.adopted.includes(id))).toEqual([]);
      expect(a.heldCount).toBe(5);
      expect(b.heldCount).toBe(5);
      const leases = new LeaseRepository(db.dataSource);
      for (const id of la.adopted) expect((await leases.holderOf(id))?.workerId).toBe('w-a');
      for (const id of lb.adopted) expect((await leases.holderOf(id))?.workerId).toBe('w-b');
    });

    it('should never hold more than its capacity', async () => {
      await pairedInstances(6);
      const sut = keeper('w-small', { capacity: 3 });
      const listener = new RecordingListener();
      await sut.start(listener);
      await sut.reconcileNow();
      await sut.reconcileNow();
      expect(sut.heldCount).toBe(3);
      expect(listener.adopted).toHaveLength(3);
      const [free] = await new LeaseRepository(db.dataSource).findOrphans(1);
      expect(await sut.claim(free)).toEqual({ kind: 'full' });
    });

    it('should claim its orphans in batches, one statement each, and start each batch together (issue #38)', async () => {
      const ids = await pairedInstances(70);
      const repository = new LeaseRepository(db.dataSource);
      const claimed: number[] = [];
      const claimMany = repository.claimMany.bind(repository);
      repository.claimMany = async (...args) => {
        claimed.push(args[0].length);
        return claimMany(...args);
      };
      const sut = keeper('w-many', {}, repository);
      const batches: string[][] = [];
      await sut.start({ leaseLost: () => undefined, orphansClaimed: async (leases) => void batches.push(leases.map((lease) => lease.instanceId)) });
      await sut.reconcileNow();

      expect(claimed).toEqual([64, 6]);
      expect(batches.map((batch) => batch.length)).toEqual([64, 6]);
      expect(batches.flat().sort()).toEqual(ids);
      expect(sut.heldCount).toBe(70);
    });

    it('should leave out of a batch what another worker holds, and count it as a lost race', async () => {
      const ids = await pairedInstances(5);
      const other = new LeaseRepository(db.dataSource);
      expect(await other.claim(ids[1], 'w-other', 60_000)).not.toBeNull();
      const sut = keeper('w-batch');
      const listener = new RecordingListener();
      await sut.start(listener);
      await sut.reconcileNow();
      expect(listener.adopted.sort()).toEqual(ids.filter((id) => id !== ids[1]));
      expect((await other.holderOf(ids[1]))?.workerId).toBe('w-other');
    });

    it("should answer a connect that claims an instance while its batch is being claimed with the batch's lease", async () => {
      const ids = await pairedInstances(3);
      const repository = new LeaseRepository(db.dataSource);
      const claimMany = repository.claimMany.bind(repository);
      let single = 0;
      const claim = repository.claim.bind(repository);
      repository.claim = async (...args) => {
        single += 1;
        return claim(...args);
      };
      let placed: Promise<unknown> | undefined;
      const sut = keeper('w-race', {}, repository);
      repository.claimMany = async (...args) => {
        const answer = claimMany(...args);
        await null; // the connect arrives while the statement runs
        placed = sut.claim(ids[0]);
        return answer;
      };
      const listener = new RecordingListener();
      await sut.start(listener);
      await sut.reconcileNow();
      expect(await placed).toEqual({ kind: 'claimed', lease: expect.objectContaining({ instanceId: ids[0], workerId: 'w-race' }) });
      expect(single).toBe(0);
      expect(listener.adopted.sort()).toEqual(ids);
    });

    it('should look for orphans first one interval after its start, or as soon as told when it is the only worker (issue #38)', async () => {
      const ids = await pairedInstances(3);
      const waiting = keeper('w-first-default', { reconcileIntervalMs: 600 });
      const waitingListener = new RecordingListener();
      await waiting.start(waitingListener);
      await sleep(300);
      expect(waitingListener.adopted).toEqual([]);
      await waitFor(() => waitingListener.adopted.length === 3, 5_000);
      await waiting.shutdown();

      const alone = keeper('w-first-alone', { reconcileIntervalMs: 60_000, firstReconcileDelayMs: 0 });
      const aloneListener = new RecordingListener();
      await alone.start(aloneListener);
      await waitFor(() => aloneListener.adopted.length === 3, 2_000);
      expect(aloneListener.adopted.sort()).toEqual(ids);
    });

    it('should release a lease when starting the adopted session fails', async () => {
      const [id] = await pairedInstances(1);
      const sut = keeper('w-fail');
      await sut.start({ leaseLost: () => undefined, orphansClaimed: async () => Promise.reject(new Error('boom')) });
      await sut.reconcileNow();
      expect(sut.heldCount).toBe(0);
      expect(await new LeaseRepository(db.dataSource).holderOf(id)).toBeNull();
    });
  });

  describe('claim', () => {
    it('should refuse an instance another worker holds', async () => {
      const [id] = await pairedInstances(1);
      const [a, b] = [keeper('w-1'), keeper('w-2')];
      await Promise.all([a.start(new RecordingListener()), b.start(new RecordingListener())]);
      expect((await a.claim(id)).kind).toBe('claimed');
      expect(await b.claim(id)).toEqual({ kind: 'held-elsewhere' });
    });
  });

  describe('takeover', () => {
    it('should hand the instances of a keeper that stopped renewing to the other keeper', async () => {
      const ids = await pairedInstances(4);
      const dead = keeper('w-dead', { ttlMs: 600 });
      await dead.start(new RecordingListener());
      await dead.reconcileNow();
      expect(dead.heldCount).toBe(4);
      dead.halt(); // kill -9: no release, no writes

      const survivor = keeper('w-survivor', { ttlMs: 600, reconcileIntervalMs: 100 });
      const listener = new RecordingListener();
      await survivor.start(listener);
      await waitFor(() => listener.adopted.length === 4, 5000);
      expect(listener.adopted.sort()).toEqual(ids);
    });

    it('should stop its sessions before the leases expire when renewals keep failing', async () => {
      const ids = await pairedInstances(2);
      const failing = new LeaseRepository(db.dataSource);
      const sut = keeper('w-cutoff', { ttlMs: 900 }, failing);
      const listener = new RecordingListener();
      await sut.start(listener);
      await sut.reconcileNow();
      const claimedAt = Date.now();
      jest.spyOn(failing, 'renewOwn').mockRejectedValue(new Error('database unreachable'));

      await waitFor(() => listener.lost.length === 2, 3000);
      // stopped while the lease rows were still live: nobody else could have claimed them yet
      expect(Date.now() - claimedAt).toBeLessThan(900);
      expect(listener.lost.sort()).toEqual(ids);
      expect(sut.heldCount).toBe(0);
    });

    it('should report a lease that was taken over as lost on the next renewal', async () => {
      const [id] = await pairedInstances(1);
      const slow = keeper('w-slow', { ttlMs: 10_000 });
      const listener = new RecordingListener();
      await slow.start(listener);
      expect((await slow.claim(id)).kind).toBe('claimed');
      // another worker takes it after it lapsed (forced here by expiring the row)
      await db.dataSource.query(`UPDATE session_leases SET expires_at = now() - interval '1 second' WHERE instance_id = $1`, [id]);
      expect(await new LeaseRepository(db.dataSource).claim(id, 'w-other', 10_000)).not.toBeNull();
      await slow.renewNow();
      expect(listener.lost).toEqual([id]);
    });
  });

  describe('late renewals under load (issue #34)', () => {
    /** A repository whose first renewal is answered `delayMs` after the database ran it (a loaded event loop). */
    const lateOnce = (delayMs: number) => {
      const repository = new LeaseRepository(db.dataSource);
      const renew = repository.renewOwn.bind(repository);
      let first = true;
      jest.spyOn(repository, 'renewOwn').mockImplementation(async (...args) => {
        const renewed = await renew(...args);
        if (first) {
          first = false;
          await sleep(delayMs);
        }
        return renewed;
      });
      return repository;
    };

    it('should keep its sessions when a renewal in flight at the cut-off is answered before the leases lapse', async () => {
      const ids = await pairedInstances(2);
      // TTL 4 s: renewed every 1.33 s, cut-off 1 s before the lapse. The first renewal (at 1.33 s) is
      // answered at ~3.5 s: after the cut-off (3 s), before the leases could lapse (4 s).
      const sut = keeper('w-late-answer', { ttlMs: 4_000 }, lateOnce(2_200));
      const listener = new RecordingListener();
      await sut.start(listener);
      for (const id of ids) expect((await sut.claim(id)).kind).toBe('claimed');

      await sleep(5_000);

      expect(listener.lost).toEqual([]);
      expect(sut.heldIds().sort()).toEqual(ids);
    });

    it('should take back, with a new token, the leases it lost by being late when nobody else took them', async () => {
      const ids = await pairedInstances(2);
      const sut = keeper('w-late-retake', { ttlMs: 1_500 }, lateOnce(1_500));
      const listener = new RecordingListener();
      await sut.start(listener);
      const before = new Map<string, string>();
      for (const id of ids) {
        const claimed = await sut.claim(id);
        if (claimed.kind === 'claimed') before.set(id, claimed.lease.fencingToken);
      }

      await waitFor(() => listener.lost.length === 2, 5_000);
      await waitFor(() => listener.adopted.length === 2, 5_000);

      expect(listener.adopted.sort()).toEqual(ids);
      for (const id of ids) {
        expect(sut.holds(id)?.fencingToken).toBe(String(Number(before.get(id)) + 1));
        expect(await new LeaseRepository(db.dataSource).holderOf(id)).toEqual(sut.holds(id));
      }
    });

    it('should renew again at once after a late renewal, so that the sessions it took back (starting slowly, on a loaded worker) are not lost again at its cut-off', async () => {
      const ids = await pairedInstances(3);
      // TTL 6 s: renewed every 2 s, cut-off 1 s before the lapse. The renewal of 2 s is answered at
      // ~6.3 s, after the lapse (6 s): the sessions are stopped and taken back, with the cut-off of
      // that renewal (7 s) due while they start, and the next tick (8 s) after it.
      const sut = keeper('w-late-slow-start', { ttlMs: 6_000 }, lateOnce(4_300));
      const listener = new (class extends RecordingListener {
        override async orphansClaimed(leases: Lease[]): Promise<void> {
          await sleep(2_400); // as three adoptions of 0.8 s did: past that cut-off
          await super.orphansClaimed(leases);
        }
      })();
      await sut.start(listener);
      for (const id of ids) expect((await sut.claim(id)).kind).toBe('claimed');

      await waitFor(() => listener.adopted.length === 3, 15_000);
      await sleep(3_000);

      // Lost once (the late renewal), never again.
      expect(listener.lost.sort()).toEqual(ids);
      expect(sut.heldIds().sort()).toEqual(ids);
    });
  });

  describe('drain (issue #39)', () => {
    it('should hand every lease over at once, and another keeper told of it adopts them long before they would have expired', async () => {
      const ids = await pairedInstances(6);
      // Adoption by the timer is an hour away: only the notice can explain a prompt takeover.
      const [draining, heir] = [
        keeper('w-draining', { ttlMs: 60_000, reconcileIntervalMs: 3_600_000 }),
        keeper('w-heir', { ttlMs: 60_000, reconcileIntervalMs: 3_600_000 }),
      ];
      const [drainingListener, heirListener] = [new RecordingListener(), new RecordingListener()];
      await draining.start(drainingListener);
      await heir.start(heirListener);
      const leases: Lease[] = [];
      for (const id of ids) {
        const claimed = await draining.claim(id);
        if (claimed.kind === 'claimed') leases.push(claimed.lease);
      }
      const announced: string[] = [];
      draining.setHandOverListener((instanceIds) => {
        announced.push(...instanceIds);
        heir.reconcileSoon();
      });

      const started = Date.now();
      await draining.beginDrain();
      // Sessions end one by one and give their leases back; the last ones are left to shutdown().
      await Promise.all(leases.slice(0, 4).map((lease) => draining.release(lease)));
      await draining.shutdown();
      await waitFor(() => heir.heldCount === 6, 5_000);

      expect(Date.now() - started).toBeLessThan(5_000);
      expect(announced.sort()).toEqual(ids);
      expect(heirListener.adopted.sort()).toEqual(ids);
      for (const lease of leases) {
        expect(heir.holds(lease.instanceId)?.fencingToken).toBe(String(Number(lease.fencingToken) + 1));
      }
      expect(await db.dataSource.query(`SELECT id FROM session_workers WHERE id = 'w-draining'`)).toEqual([]);
    });
  });

  describe('instances announced as handed over (issue #39)', () => {
    it('should claim the instances named in the announcement without scanning for orphans', async () => {
      const repository = new LeaseRepository(db.dataSource);
      const scans = jest.spyOn(repository, 'findOrphans');
      const heir = keeper('w-named', { reconcileIntervalMs: 3_600_000 }, repository);
      const listener = new RecordingListener();
      await heir.start(listener);
      await heir.reconcileNow();
      // Orphans only from now on, and the timer's next reconcile an hour away: only the announcement can explain the claims.
      const ids = await pairedInstances(6);
      scans.mockClear();
      heir.reconcileSoon(ids);
      await waitFor(() => heir.heldCount === 6, 5_000);
      expect(listener.adopted.sort()).toEqual(ids);
      expect(scans).not.toHaveBeenCalled();
    });
  });

  describe('instances a drain hands over, shared by the heirs by their room (issue #39)', () => {
    /** `held` instances claimed by each heir, then `handed` more handed over by a drain; returns each heir's count. */
    const drainAmong = async (held: number[], handed: number) => {
      const ids = await pairedInstances(held.reduce((a, b) => a + b, 0) + handed);
      const heirs = held.map((_, n) => keeper(`w-heir-${n}`, { ttlMs: 60_000, reconcileIntervalMs: 3_600_000 }));
      const draining = keeper('w-drainer', { ttlMs: 60_000, reconcileIntervalMs: 3_600_000 });
      const listeners = heirs.map(() => new RecordingListener());
      for (const [n, heir] of heirs.entries()) await heir.start(listeners[n]);
      await draining.start(new RecordingListener());
      let next = 0;
      for (const [n, heir] of heirs.entries()) for (let i = 0; i < held[n]; i++) await heir.claim(ids[next++]);
      const leases: Lease[] = [];
      for (const id of ids.slice(next)) {
        const claimed = await draining.claim(id);
        if (claimed.kind === 'claimed') leases.push(claimed.lease);
      }
      draining.setHandOverListener((instanceIds) => {
        for (const heir of heirs) heir.reconcileSoon(instanceIds);
      });
      await draining.beginDrain();
      await Promise.all(leases.map((lease) => draining.release(lease)));
      await draining.shutdown();
      await waitFor(() => heirs.reduce((sum, heir) => sum + heir.heldCount, 0) === ids.length, 5_000);
      expect(listeners.flatMap((listener) => listener.adopted).sort()).toEqual(ids.slice(next).sort());
      const rows: Array<{ n: string }> = await db.dataSource.query(`SELECT count(*) AS n FROM session_leases WHERE expires_at > now()`);
      expect(Number(rows[0].n)).toBe(ids.length);
      return heirs.map((heir, n) => heir.heldCount - held[n]);
    };

    it('should give nothing to an heir at its fair share: the empty one takes them all', async () => {
      // 40 among two: a share of 20; the busy heir holds 20. Shared evenly (27fc1f8), the busy one took half, and the
      // last worker of a rolling restart ended with 31-36 of 50 (bench/cluster runs 45, 47, 49).
      const [busy, idle] = await drainAmong([20, 0], 20);
      expect(busy).toBe(0);
      expect(idle).toBe(20);
    });

    it('should share a drain about evenly between two empty heirs, and give none to the one at its share', async () => {
      const [busy, first, second] = await drainAmong([20, 0, 0], 40);
      expect(busy).toBe(0);
      expect(first).toBeGreaterThanOrEqual(10);
      expect(second).toBeGreaterThanOrEqual(10);
    });
  });

  describe('rebalance (ADR 0043)', () => {
    it('should find the surplus over the share while another worker has room (its capacity counts), and none once the giver drains', async () => {
      const ids = await pairedInstances(12);
      const [giver, joiner] = [keeper('w-giver', { reconcileIntervalMs: 3_600_000 }), keeper('w-joiner', { capacity: 4, reconcileIntervalMs: 3_600_000 })];
      await giver.start(new RecordingListener());
      for (const id of ids) await giver.claim(id);
      expect(await giver.surplus()).toBe(0); // alone: nobody to give to
      const surplusSeen = jest.fn();
      giver.setSurplusListener(surplusSeen);
      await joiner.start(new RecordingListener());
      // 12 among two: a share of 6, but the joiner takes 4 at most.
      expect(await giver.surplus()).toBe(4);
      expect(await joiner.surplus()).toBe(0);
      await giver.reconcileNow();
      expect(surplusSeen).toHaveBeenCalledTimes(1);
      await giver.beginDrain();
      expect(await giver.surplus()).toBe(0);
    });

    it('should hand over and announce a lease given back for a move (not delete it), and the worker with room adopts it', async () => {
      const ids = await pairedInstances(4);
      const [giver, joiner] = [
        keeper('w-giver2', { ttlMs: 60_000, reconcileIntervalMs: 3_600_000 }),
        keeper('w-joiner2', { ttlMs: 60_000, reconcileIntervalMs: 3_600_000 }),
      ];
      const joinerListener = new RecordingListener();
      await giver.start(new RecordingListener());
      const leases: Lease[] = [];
      for (const id of ids) {
        const claimed = await giver.claim(id);
        if (claimed.kind === 'claimed') leases.push(claimed.lease);
      }
      await joiner.start(joinerListener);
      const announced: string[] = [];
      giver.setHandOverListener((instanceIds) => {
        announced.push(...instanceIds);
        joiner.reconcileSoon(instanceIds);
      });
      expect(giver.beginMove('not-held')).toBe(false);
      expect(giver.beginMove(leases[0].instanceId)).toBe(true);
      await giver.release(leases[0]);
      giver.endMove(leases[0].instanceId);
      await waitFor(() => joiner.heldCount === 1, 5_000);
      expect(announced).toEqual([leases[0].instanceId]);
      expect(joinerListener.adopted).toEqual([leases[0].instanceId]);
      expect(joiner.holds(leases[0].instanceId)?.fencingToken).toBe(String(Number(leases[0].fencingToken) + 1));
      // A release that is not a move still deletes the row (the instance wants no session): nothing announced.
      await giver.release(leases[1]);
      expect(announced).toHaveLength(1);
      expect(await new LeaseRepository(db.dataSource).holderOf(leases[1].instanceId)).toBeNull();
    });
  });

  describe('drain, renewals meanwhile (issue #39)', () => {
    it('should keep renewing the leases it still holds while draining, without putting itself back in the fair share', async () => {
      const ids = await pairedInstances(4);
      const [draining, heir] = [
        keeper('w-draining-renew', { ttlMs: 60_000, reconcileIntervalMs: 3_600_000 }),
        keeper('w-heir-renew', { ttlMs: 60_000, reconcileIntervalMs: 3_600_000 }),
      ];
      const listener = new RecordingListener();
      await draining.start(listener);
      await heir.start(new RecordingListener());
      for (const id of ids) await draining.claim(id);

      await draining.beginDrain();
      // A renewal tick during a long drain (one instance's send still running): its leases live on…
      await draining.renewNow();
      expect(draining.heldCount).toBe(4);
      expect(listener.lost).toEqual([]);
      // …and the worker stays out of the fair share, so that the heir takes every instance handed over.
      expect(await db.dataSource.query(`SELECT id FROM session_workers WHERE id = 'w-draining-renew'`)).toEqual([]);
      const { share, workers } = await new LeaseRepository(db.dataSource).fairShare('w-heir-renew', 100, 60_000);
      expect({ share, workers }).toEqual({ share: 4, workers: 1 });
    });
  });

  describe('shutdown', () => {
    it('should give every lease up and remove the worker row', async () => {
      const [id] = await pairedInstances(1);
      const sut = keeper('w-bye');
      await sut.start(new RecordingListener());
      await sut.claim(id);
      await sut.shutdown();
      expect(await new LeaseRepository(db.dataSource).holderOf(id)).toBeNull();
      expect(await db.dataSource.query(`SELECT id FROM session_workers WHERE id = 'w-bye'`)).toEqual([]);
    });
  });
});
