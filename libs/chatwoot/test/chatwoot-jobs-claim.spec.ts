import { ChatwootRepository, InstanceRepository, type ChatwootJob } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';

jest.setTimeout(60_000);

/**
 * The bridge's job queue against Postgres: per lane one job at a time and in order, whatever number of
 * runners claim side by side (FOR UPDATE SKIP LOCKED); a failed head holds its lane back; a crashed
 * runner's claim lapses and the job comes back with its attempt counted; a key is queued once.
 */
describe(ChatwootRepository.name, () => {
  let db: TestDatabase;
  let sut: ChatwootRepository;
  const instanceId = 'rcwclaim';

  const enqueue = (jobs: Array<{ lane: string; key: string }>) =>
    db.dataSource.transaction((manager) =>
      sut.within(manager).enqueue(
        instanceId,
        jobs.map(({ lane, key }) => ({ lane, kind: 'wa.message', dedupeKey: key, payload: { key } })),
      ),
    );

  beforeAll(async () => {
    db = await openTestDatabase();
    sut = new ChatwootRepository(db.dataSource);
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: 'tok-cw-claim', name: 'claim' });
  });
  afterAll(() => db.close());
  beforeEach(() => db.dataSource.query(`DELETE FROM chatwoot_jobs`));

  describe('enqueue', () => {
    it('should queue a key once, however often it is given', async () => {
      expect(
        await enqueue([
          { lane: 'a', key: 'k1' },
          { lane: 'a', key: 'k1' },
        ]),
      ).toBe(1);
      expect(
        await enqueue([
          { lane: 'a', key: 'k1' },
          { lane: 'a', key: 'k2' },
        ]),
      ).toBe(1);
      expect((await sut.pending(instanceId)).length).toBe(2);
    });
  });

  describe('claim', () => {
    it('should hand each job out once, one per lane at a time, in lane order, to runners claiming side by side', async () => {
      const lanes = ['a', 'b', 'c', 'd'];
      await enqueue(lanes.flatMap((lane) => Array.from({ length: 15 }, (_, n) => ({ lane, key: `${lane}-${String(n).padStart(2, '0')}` }))));
      const done: string[] = [];
      const inFlight = new Set<string>();
      const runner = async (name: string) => {
        for (let idle = 0; idle < 5;) {
          const jobs = await sut.claim(name, 3, 30_000);
          if (jobs.length === 0) {
            idle++;
            await new Promise((resolve) => setTimeout(resolve, 10));
            continue;
          }
          idle = 0;
          for (const job of jobs) {
            // Never two jobs of one lane at once.
            expect(inFlight.has(job.lane)).toBe(false);
            inFlight.add(job.lane);
          }
          await Promise.all(
            jobs.map(async (job: ChatwootJob) => {
              await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
              done.push(job.dedupeKey);
              inFlight.delete(job.lane);
              expect(await sut.finish(job, 'done')).toBe(true);
            }),
          );
        }
      };
      await Promise.all(['r1', 'r2', 'r3', 'r4'].map(runner));
      expect(done).toHaveLength(60);
      expect(new Set(done).size).toBe(60);
      for (const lane of lanes) {
        const order = done.filter((key) => key.startsWith(`${lane}-`));
        expect(order).toEqual([...order].sort());
      }
    });

    it('should hold a lane behind a head that failed until it is due again', async () => {
      await enqueue([
        { lane: 'a', key: 'a1' },
        { lane: 'a', key: 'a2' },
        { lane: 'b', key: 'b1' },
      ]);
      const first = await sut.claim('r1', 10, 30_000);
      expect(first.map((job) => job.dedupeKey)).toEqual(['a1', 'b1']);
      await sut.retryLater(first[0], 400, 'Chatwoot answered 503');
      await sut.finish(first[1], 'done');
      expect(await sut.claim('r1', 10, 30_000)).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 450));
      const again = await sut.claim('r1', 10, 30_000);
      expect(again.map((job) => [job.dedupeKey, job.attempts])).toEqual([['a1', 2]]);
    });

    it("should give a crashed runner's job to another once its claim lapses, with the attempt counted, and ignore the late result", async () => {
      await enqueue([{ lane: 'a', key: 'a1' }]);
      const [lost] = await sut.claim('dead', 10, 200);
      expect(await sut.claim('live', 10, 200)).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 250));
      const [taken] = await sut.claim('live', 10, 30_000);
      expect(taken).toMatchObject({ dedupeKey: 'a1', attempts: 2, claimedBy: 'live' });
      expect(await sut.finish(lost, 'done')).toBe(false);
      expect(await sut.finish(taken, 'done')).toBe(true);
      expect(await sut.pending(instanceId)).toEqual([]);
    });

    it('should keep a job from others while its claim is renewed, and say when the claim was lost', async () => {
      await enqueue([{ lane: 'a', key: 'a1' }]);
      const [slow] = await sut.claim('slow', 10, 200);
      for (let n = 0; n < 3; n++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(await sut.extendClaim(slow, 200)).toBe(true);
      }
      // 300 ms after the claim, past its first 200: still the slow runner's.
      expect(await sut.claim('other', 10, 200)).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 250));
      const [taken] = await sut.claim('other', 10, 30_000);
      expect(taken).toMatchObject({ dedupeKey: 'a1', claimedBy: 'other' });
      expect(await sut.extendClaim(slow, 200)).toBe(false);
      expect(await sut.finish(taken, 'done')).toBe(true);
      expect(await sut.extendClaim(taken, 200)).toBe(false);
    });
  });
});
