import { InProcessBus } from '@gw/bus';
import { Subjects } from '@gw/contracts';
import { InstanceRepository, OutboxCursorRepository, OutboxRepository, type OutboxRow, type Tx } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { OutboxFollower, type OutboxFollowerOptions } from '@gw/relay';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import type { EntityManager } from 'typeorm';

/**
 * The step's transaction, for the test's own work table (follower_work, made in beforeAll): a stand-in
 * for a consumer's repository, which no library holds, so the test writes it itself.
 */
const testTable = (tx: Tx): EntityManager => tx as EntityManager;

const logger = createLogger('test', 'silent');

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe(OutboxFollower.name, () => {
  let db: TestDatabase;
  let bus: InProcessBus;
  let followers: OutboxFollower[] = [];

  /** Writes events the way the services do: with their change, then a notice on the bus. */
  async function emit(instanceId: string, ...types: string[]): Promise<string[]> {
    const ids: string[] = [];
    await db.dataSource.transaction(async (manager) => {
      for (const type of types)
        ids.push((await new OutboxRepository(db.dataSource).within(manager).insert(instanceId, [{ eventType: type, payload: { type } }])) as string);
    });
    bus.publish(Subjects.outbox(instanceId), { instanceId });
    return ids;
  }

  async function work(consumer: string): Promise<Array<{ event_id: string; instance_id: string; follower: string }>> {
    return db.dataSource.query(`SELECT event_id, instance_id, follower FROM follower_work WHERE consumer = $1 ORDER BY seq`, [consumer]);
  }

  function follower(name: string, options: Partial<OutboxFollowerOptions> & { consumer: string; instances: () => Promise<string[]> }): OutboxFollower {
    const handle = async (tx: Tx, instanceId: string, events: OutboxRow[]) => {
      for (const event of events) {
        await testTable(tx).query(`INSERT INTO follower_work (consumer, event_id, instance_id, event_type, follower) VALUES ($1, $2, $3, $4, $5)`, [
          options.consumer,
          event.id,
          instanceId,
          event.eventType,
          name,
        ]);
      }
    };
    const created = new OutboxFollower(new OutboxCursorRepository(db.dataSource), bus, { handle, pollIntervalMs: 50, refreshMs: 100, ...options }, logger);
    followers.push(created);
    created.start();
    return created;
  }

  /**
   * A follower of `messages` on one instance woken only by notices (no poll during the test), once its
   * cursor exists: the instances it committed steps for, and its cursor's position.
   */
  async function noticeOnlyFollower(consumer: string, instanceId: string, options: Partial<OutboxFollowerOptions> = {}) {
    const steps: string[] = [];
    follower('one', {
      consumer,
      instances: async () => [instanceId],
      eventTypes: ['messages'],
      pollIntervalMs: 60_000,
      committed: (stepped) => steps.push(stepped),
      ...options,
    });
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = $1`, [consumer]))[0].n === 1);
    const cursor = async () => (await db.dataSource.query(`SELECT id::text AS id FROM outbox_cursors WHERE consumer = $1`, [consumer]))[0].id as string;
    return { steps, cursor };
  }

  beforeAll(async () => {
    db = await openTestDatabase();
    bus = new InProcessBus();
    const instances = new InstanceRepository(db.dataSource);
    for (const id of ['fa', 'fb', 'fc']) await instances.create({ id, token: `tok-${id}`, name: id });
    // Work rows of the test's handlers; no unique key, so a second copy of an event would show.
    await db.dataSource.query(
      `CREATE TABLE follower_work (seq bigserial PRIMARY KEY, consumer text, event_id text, instance_id text, event_type text, follower text)`,
    );
  });

  afterEach(async () => {
    await Promise.all(followers.map((f) => f.stop()));
    followers = [];
  });

  afterAll(async () => {
    await bus.close();
    await db.close();
  });

  it('hands each new event to exactly one of several followers, in commit order per instance, and none from before', async () => {
    const before = await emit('fa', 'messages');
    const all = async () => ['fa', 'fb'];
    follower('one', { consumer: 'c1', instances: all });
    follower('two', { consumer: 'c1', instances: all });
    follower('three', { consumer: 'c1', instances: all });
    // Let the cursors be created before writing what they must see.
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c1'`))[0].n === 2);

    const written: Record<string, string[]> = { fa: [], fb: [] };
    await Promise.all(
      ['fa', 'fb'].map(async (instanceId) => {
        for (let i = 0; i < 30; i++) written[instanceId].push(...(await emit(instanceId, 'messages', 'chats')));
      }),
    );
    await until(async () => (await work('c1')).length >= 120);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const rows = await work('c1');
    expect(rows).toHaveLength(120);
    expect(new Set(rows.map((row) => row.event_id)).size).toBe(120);
    expect(rows.map((row) => row.event_id)).not.toContain(before[0]);
    for (const instanceId of ['fa', 'fb']) {
      expect(rows.filter((row) => row.instance_id === instanceId).map((row) => row.event_id)).toEqual(written[instanceId]);
    }
  });

  it('moves past the event types it does not want, handing over only the others', async () => {
    follower('one', { consumer: 'c2', instances: async () => ['fa'], eventTypes: ['messages'] });
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c2'`))[0].n === 1);
    const [message, , other] = await emit('fa', 'messages', 'presence', 'messages');
    await until(async () => (await work('c2')).length === 2);
    expect((await work('c2')).map((row) => row.event_id)).toEqual([message, other]);
    const [cursor] = await db.dataSource.query(`SELECT id::text AS id FROM outbox_cursors WHERE consumer = 'c2'`);
    expect(cursor.id).toBe(other);
  });

  it("with `ignore`, a notice of only ignored events steps nothing; the next wanted event's step moves past them, handing over only it", async () => {
    const { steps, cursor } = await noticeOnlyFollower('c6', 'fb', { ignore: ['$.type ? (@ == "skip")'] });
    const start = await cursor();
    const skipped = await db.dataSource.transaction((manager) =>
      new OutboxRepository(db.dataSource).within(manager).insert('fb', [{ eventType: 'messages', payload: { type: 'skip' } }]),
    );
    bus.publish(Subjects.outbox('fb'), { instanceId: 'fb' });
    // Peeked, not stepped: no commit, the cursor has not moved (a step would have, well within this wait).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(steps).toEqual([]);
    expect(await cursor()).toBe(start);

    const [wanted] = await emit('fb', 'messages');
    await until(async () => (await cursor()) === wanted);
    expect((await work('c6')).map((row) => row.event_id)).toEqual([wanted]);
    expect(steps).toEqual(['fb']);
    expect(BigInt(skipped as string)).toBeLessThan(BigInt(wanted));
  });

  it('skips a notice whose commit wrote only event types it does not want, and looks on one that names a wanted type or none', async () => {
    const { steps, cursor } = await noticeOnlyFollower('c20', 'fa');
    const start = await cursor();
    const presence = (await db.dataSource.transaction((manager) =>
      new OutboxRepository(db.dataSource).within(manager).insert('fa', [{ eventType: 'presence', payload: { type: 'presence' } }]),
    )) as string;
    bus.publish(Subjects.outbox('fa'), { instanceId: 'fa', lastId: presence, types: ['presence'] });
    // Not looked at: no step, the cursor has not moved (a step would have, well within this wait).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(steps).toEqual([]);
    expect(await cursor()).toBe(start);
    // The same notice without its types is looked at: the step moves past the presence event.
    bus.publish(Subjects.outbox('fa'), { instanceId: 'fa', lastId: presence });
    await until(async () => (await cursor()) === presence);
    expect(steps).toEqual(['fa']);

    const [wanted] = await db.dataSource
      .transaction(async (manager) => [
        (await new OutboxRepository(db.dataSource).within(manager).insert('fa', [{ eventType: 'presence', payload: {} }])) as string,
        (await new OutboxRepository(db.dataSource).within(manager).insert('fa', [{ eventType: 'messages', payload: {} }])) as string,
      ])
      .then((ids) => [ids[1]]);
    bus.publish(Subjects.outbox('fa'), { instanceId: 'fa', lastId: wanted, types: ['presence', 'messages'] });
    await until(async () => (await cursor()) === wanted);
    expect((await work('c20')).map((row) => row.event_id)).toEqual([wanted]);
  });

  it('skips a notice its skipNotice says holds nothing for it, without a peek or a step, and looks on the next that does not', async () => {
    const { steps, cursor } = await noticeOnlyFollower('c21', 'fb', {
      ignore: ['$.mine ? (@ == true)'],
      skipNotice: (notice) => notice.origin === 'self' || notice.sentByApi === true,
    });
    const start = await cursor();
    const own = (await db.dataSource.transaction((manager) =>
      new OutboxRepository(db.dataSource).within(manager).insert('fb', [{ eventType: 'messages', payload: { mine: true } }]),
    )) as string;
    const peeks = jest.spyOn(OutboxCursorRepository.prototype, 'peek');
    bus.publish(Subjects.outbox('fb'), { instanceId: 'fb', lastId: own, types: ['messages'], origin: 'self' });
    bus.publish(Subjects.outbox('fb'), { instanceId: 'fb', lastId: own, types: ['messages'], sentByApi: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(peeks).not.toHaveBeenCalled();
    expect(steps).toEqual([]);
    expect(await cursor()).toBe(start);
    peeks.mockRestore();
    // A wanted event's notice: its step hands it over and moves past the skipped one too.
    const wanted = (await db.dataSource.transaction((manager) =>
      new OutboxRepository(db.dataSource).within(manager).insert('fb', [{ eventType: 'messages', payload: { mine: false } }]),
    )) as string;
    bus.publish(Subjects.outbox('fb'), { instanceId: 'fb', lastId: wanted, types: ['messages'] });
    await until(async () => (await cursor()) === wanted);
    expect((await work('c21')).map((row) => row.event_id)).toEqual([wanted]);
  });

  it("hands over at once an event committed after an older transaction that still runs, and that one's events once it ends: none skipped, none twice", async () => {
    follower('one', {
      consumer: 'c9',
      instances: async () => ['fc'],
      eventTypes: ['messages'],
      ignore: ['$.type ? (@ == "skip")'],
      // No poll during the test: only notices wake it.
      pollIntervalMs: 60_000,
    });
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c9'`))[0].n === 1);
    const cursor = async () =>
      (await db.dataSource.query(`SELECT tx::text AS tx, pending::text[] AS pending FROM outbox_cursors WHERE consumer = 'c9'`))[0] as {
        tx: string;
        pending: string[];
      };
    // Three transactions that started first and run on: one holds an event of the instance, one only an id, one an event it rolls back.
    const open = async () => {
      const runner = db.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      const [{ tx }] = await runner.query(`SELECT pg_current_xact_id()::text AS tx`);
      return { runner, tx: tx as string };
    };
    const slow = await open();
    const idle = await open();
    const aborted = await open();
    try {
      const late = await new OutboxRepository(db.dataSource).within(slow.runner.manager).insert('fc', [{ eventType: 'messages', payload: { type: 'late' } }]);
      await new OutboxRepository(db.dataSource).within(aborted.runner.manager).insert('fc', [{ eventType: 'messages', payload: { type: 'aborted' } }]);

      const [first] = await emit('fc', 'messages');
      await until(async () => (await work('c9')).length === 1, 2_000);
      expect((await work('c9')).map((row) => row.event_id)).toEqual([first]);
      // The cursor moved past the three, and remembers them (beside whatever else runs in the cluster now).
      expect((await cursor()).pending).toEqual(expect.arrayContaining([slow.tx, idle.tx, aborted.tx]));

      await aborted.runner.rollbackTransaction();
      await idle.runner.commitTransaction();
      await slow.runner.commitTransaction();
      bus.publish(Subjects.outbox('fc'), { instanceId: 'fc' });
      await until(async () => (await work('c9')).length === 2, 2_000);
      const [next] = await emit('fc', 'messages');
      await until(async () => (await work('c9')).length === 3, 2_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await work('c9')).map((row) => row.event_id)).toEqual([first, late, next]);
      const { pending } = await cursor();
      for (const ended of [slow.tx, idle.tx, aborted.tx]) expect(pending).not.toContain(ended);
    } finally {
      for (const { runner } of [slow, idle, aborted]) {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }
    }
  });

  it("with transactions that overlap and commit out of their order, hands every event over exactly once, each writer's in its commit order", async () => {
    const all = async () => ['fa'];
    follower('one', { consumer: 'c10', instances: all });
    follower('two', { consumer: 'c10', instances: all });
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c10'`))[0].n === 1);
    const written: string[][] = [[], [], [], []];
    await Promise.all(
      written.map(async (mine) => {
        for (let i = 0; i < 15; i++) {
          await db.dataSource.transaction(async (manager) => {
            await manager.query(`SELECT pg_current_xact_id()`);
            mine.push((await new OutboxRepository(db.dataSource).within(manager).insert('fa', [{ eventType: 'messages', payload: {} }])) as string);
            // Held open a while: younger transactions of the other writers commit first.
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 30));
          });
          bus.publish(Subjects.outbox('fa'), { instanceId: 'fa' });
        }
      }),
    );
    await until(async () => (await work('c10')).length >= 60);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const handed = (await work('c10')).map((row) => row.event_id);
    expect(handed).toHaveLength(60);
    expect(new Set(handed)).toEqual(new Set(written.flat()));
    for (const mine of written) expect(handed.filter((id) => mine.includes(id))).toEqual(mine);
  });

  it("starts at the end even while an older transaction runs: nothing committed before is replayed, that transaction's events are read", async () => {
    const old = db.dataSource.createQueryRunner();
    await old.connect();
    try {
      await old.startTransaction();
      const during = await new OutboxRepository(db.dataSource).within(old.manager).insert('fb', [{ eventType: 'messages', payload: {} }]);
      const [before] = await emit('fb', 'messages');
      follower('one', { consumer: 'c11', instances: async () => ['fb'] });
      await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c11'`))[0].n === 1);
      const [after] = await emit('fb', 'messages');
      await until(async () => (await work('c11')).length === 1);
      await old.commitTransaction();
      bus.publish(Subjects.outbox('fb'), { instanceId: 'fb' });
      await until(async () => (await work('c11')).length === 2);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await work('c11')).map((row) => row.event_id)).toEqual([after, during]);
      expect(before).not.toBe(after);
    } finally {
      if (old.isTransactionActive) await old.rollbackTransaction();
      await old.release();
    }
  });

  it('tells a step over a cursor held elsewhere (busy) from one over no cursor at all (gone)', async () => {
    const cursors = new OutboxCursorRepository(db.dataSource);
    const handle = async () => undefined;
    expect(await cursors.step('nobody', 'fa', 10, handle)).toMatchObject({ busy: false, gone: true, read: 0 });
    await cursors.follow('c12', ['fa']);
    const holder = db.dataSource.createQueryRunner();
    await holder.connect();
    try {
      await holder.startTransaction();
      await holder.query(`SELECT 1 FROM outbox_cursors WHERE consumer = 'c12' FOR UPDATE`);
      const held = await cursors.step('c12', 'fa', 10, handle);
      expect(held).toMatchObject({ busy: true, read: 0 });
      expect(held.gone).toBeFalsy();
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
    const free = await cursors.step('c12', 'fa', 10, handle);
    expect(free.busy).toBe(false);
    expect(free.gone).toBeFalsy();
  });

  it('tells `committed` once the step committed, with what the handler wrote visible to others', async () => {
    const seen: Array<{ instanceId: string; visible: number }> = [];
    const committed = (instanceId: string) => {
      // Another connection (a runner woken here) must see the handler's rows already.
      void db.dataSource
        .query(`SELECT count(*)::int AS n FROM follower_work WHERE consumer = 'c5'`)
        .then(([row]: Array<{ n: number }>) => seen.push({ instanceId, visible: row.n }));
    };
    follower('one', { consumer: 'c5', instances: async () => ['fa'], committed });
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c5'`))[0].n === 1);
    await emit('fa', 'messages', 'messages');
    await until(async () => seen.length > 0);
    expect(seen[0]).toEqual({ instanceId: 'fa', visible: 2 });
  });

  it('rolls a failed step back and hands the same events over again, once', async () => {
    let failures = 1;
    const handle = async (tx: Tx, instanceId: string, events: OutboxRow[]) => {
      for (const event of events) {
        await testTable(tx).query(`INSERT INTO follower_work (consumer, event_id, instance_id, event_type, follower) VALUES ('c3', $1, $2, $3, 'x')`, [
          event.id,
          instanceId,
          event.eventType,
        ]);
      }
      if (failures-- > 0) throw new Error('handler failed after writing');
    };
    follower('x', { consumer: 'c3', instances: async () => ['fb'], handle });
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c3'`))[0].n === 1);
    const ids = await emit('fb', 'messages', 'messages');
    await until(async () => (await work('c3')).length === 2);
    expect((await work('c3')).map((row) => row.event_id)).toEqual(ids);
    expect(failures).toBeLessThan(0);
  });

  it('after a failed step waits before the next pass however many notices come, and recovers once the step succeeds', async () => {
    let failing = true;
    let calls = 0;
    const handle = async (tx: Tx, instanceId: string, events: OutboxRow[]) => {
      calls++;
      if (failing) throw new Error('database gone');
      for (const event of events) {
        await testTable(tx).query(`INSERT INTO follower_work (consumer, event_id, instance_id, event_type, follower) VALUES ('c8', $1, $2, $3, 'x')`, [
          event.id,
          instanceId,
          event.eventType,
        ]);
      }
    };
    follower('x', { consumer: 'c8', instances: async () => ['fc'], handle, pollIntervalMs: 1_000, refreshMs: 10_000 });
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c8'`))[0].n === 1);
    const ids = await emit('fc', 'messages');
    await until(async () => calls > 0);
    // A notice every 2 ms for ~500 ms: without a backoff each one is a pass (a step, a failure, a log line).
    const before = calls;
    const notices = setInterval(() => bus.publish(Subjects.outbox('fc'), { instanceId: 'fc' }), 2);
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const passes = calls - before;
      expect(passes).toBeGreaterThan(0);
      expect(passes).toBeLessThanOrEqual(5);

      failing = false;
      await until(async () => (await work('c8')).length === 1, 3_000);
    } finally {
      clearInterval(notices);
    }
    expect((await work('c8')).map((row) => row.event_id)).toEqual(ids);
  });

  it('stops at once while it waits after a failed pass', async () => {
    let calls = 0;
    const f = follower('x', {
      consumer: 'c9',
      instances: async () => ['fc'],
      handle: async () => {
        calls++;
        throw new Error('database gone');
      },
      pollIntervalMs: 60_000,
    });
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c9'`))[0].n === 1);
    await emit('fc', 'messages');
    // Three failures in a row: the wait now is 400 ms.
    await until(async () => calls >= 3, 3_000);
    const started = Date.now();
    await f.stop();
    expect(Date.now() - started).toBeLessThan(200);
  });

  it('drops the cursor of an instance no longer followed, and starts at the end when followed again', async () => {
    let followed = ['fc'];
    const f = follower('x', { consumer: 'c4', instances: async () => followed });
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c4'`))[0].n === 1);
    const [first] = await emit('fc', 'messages');
    await until(async () => (await work('c4')).length === 1);

    followed = [];
    f.refresh();
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c4'`))[0].n === 0);
    const [missed] = await emit('fc', 'messages');

    followed = ['fc'];
    f.refresh();
    await until(async () => (await db.dataSource.query(`SELECT count(*)::int AS n FROM outbox_cursors WHERE consumer = 'c4'`))[0].n === 1);
    const [later] = await emit('fc', 'messages');
    await until(async () => (await work('c4')).length === 2);
    expect((await work('c4')).map((row) => row.event_id)).toEqual([first, later]);
    expect(missed).not.toBe(later);
  });
});
