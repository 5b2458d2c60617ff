import { InProcessBus } from '@gw/bus';
import type { SendRequest } from '@gw/contracts';
import { InstanceRepository, SendQueueRepository } from '@gw/persistence';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { randomBytes } from 'node:crypto';
import { AsyncQueue } from '../src/async-queue';
import { EnqueueBatcher } from '../src/enqueue-batcher';

jest.setTimeout(30_000);

describe(EnqueueBatcher.name, () => {
  it('groups what arrives while a write is in flight and answers each caller with its own result', async () => {
    const writes: number[][] = [];
    let release!: () => void;
    const firstWrite = new Promise<void>((resolve) => (release = resolve));
    const sut = new EnqueueBatcher<number, string>(
      async (items) => {
        writes.push(items);
        return items.map((item) => `many:${item}`);
      },
      async (item) => {
        writes.push([item]);
        if (item === 0) await firstWrite;
        return `one:${item}`;
      },
      { maxBatch: 3, maxInFlight: 1 },
    );

    const results = [0, 1, 2, 3, 4, 5].map((item) => sut.write(item));
    release();

    expect(await Promise.all(results)).toEqual(['one:0', 'many:1', 'many:2', 'many:3', 'many:4', 'many:5']);
    expect(writes).toEqual([[0], [1, 2, 3], [4, 5]]);
    expect(sut.stats).toEqual({ statements: 3, items: 6, fallbacks: 0 });
  });

  it('writes a failed group one by one, so only the bad item fails', async () => {
    let hold!: () => void;
    const held = new Promise<void>((resolve) => (hold = resolve));
    const sut = new EnqueueBatcher<number, number>(
      async (items) => {
        if (items.includes(13)) throw new Error('bad row in the group');
        return items;
      },
      async (item) => {
        if (item === 0) await held;
        if (item === 13) throw new Error('13 is bad');
        return item;
      },
      { maxBatch: 10, maxInFlight: 1 },
    );

    const first = sut.write(0);
    const rest = [12, 13, 14].map((item) =>
      sut.write(item).then(
        (value) => ({ value }),
        (error: Error) => ({ error: error.message }),
      ),
    );
    hold();

    expect(await first).toBe(0);
    expect(await Promise.all(rest)).toEqual([{ value: 12 }, { error: '13 is bad' }, { value: 14 }]);
    expect(sut.stats.fallbacks).toBe(1);
  });
});

describe(`${AsyncQueue.name} group commit`, () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => {
    await db?.close();
  });

  const newInstance = async () => {
    const id = `i${randomBytes(6).toString('hex')}`;
    await new InstanceRepository(db.dataSource).create({ id, token: `t${id}`, name: id });
    return id;
  };
  const request = (instanceId: string, text: string): SendRequest => ({
    instanceId,
    recordId: `r${randomBytes(4).toString('hex').slice(0, 7)}`,
    messageId: `3EB0${randomBytes(9).toString('hex').toUpperCase()}`,
    chatJid: '5511999990000@s.whatsapp.net',
    content: { kind: 'text', text, linkPreview: null },
    delayMs: 0,
    record: { sendFunction: 'SendTextMessage', sendPayload: { number: '5511999990000', text }, trackSource: '', trackId: '', sendFolderId: '' },
  });

  it('commits concurrent accepts of many instances in shared statements: every Queued row with its queue row', async () => {
    const bus = new InProcessBus();
    const queue = new AsyncQueue(new SendQueueRepository(db.dataSource), bus, {
      drainTimeoutMs: 1_000,
      drainPollMs: 20,
      batching: { maxBatch: 50, maxInFlight: 1 },
    });
    const instances = await Promise.all([newInstance(), newInstance(), newInstance()]);
    const requests = Array.from({ length: 120 }, (_, index) => request(instances[index % 3], `hello ${index}`));

    const rows = await Promise.all(requests.map((sent) => queue.enqueue(sent, '5511888880000')));

    expect(rows.map((row) => [row.messageId, row.status, row.text])).toEqual(
      requests.map((sent) => [sent.messageId, 'Queued', (sent.content as { text: string }).text]),
    );
    const stats = queue.acceptStats;
    expect(stats.items).toBe(120);
    expect(stats.statements).toBeLessThan(120);
    const queued: Array<{ message_id: string; request: SendRequest }> = await db.dataSource.query(
      `SELECT q.message_id, q.request FROM send_queue q JOIN messages m ON m.instance_id = q.instance_id AND m.message_id = q.message_id AND m.status = 'Queued'
       WHERE q.instance_id = ANY($1::text[]) ORDER BY q.id`,
      [instances],
    );
    // Every accept is queued once, in the order the callers came (one caller per accept, all concurrent).
    expect(queued.map((row) => row.message_id)).toEqual(requests.map((sent) => sent.messageId));
    expect(queued[5].request).toEqual(requests[5]);
    const lanes: Array<{ n: number }> = await db.dataSource.query(`SELECT count(*)::int AS n FROM send_lanes WHERE instance_id = ANY($1::text[])`, [instances]);
    expect(lanes[0].n).toBe(3);
    await bus.close();
  });

  it('a bad accept in a group (unknown instance) fails alone; the others are queued', async () => {
    const bus = new InProcessBus();
    const queue = new AsyncQueue(new SendQueueRepository(db.dataSource), bus, {
      drainTimeoutMs: 1_000,
      drainPollMs: 20,
      batching: { maxBatch: 50, maxInFlight: 1 },
    });
    const instance = await newInstance();
    const good = Array.from({ length: 10 }, (_, index) => request(instance, `ok ${index}`));
    const bad = request('no-such-instance', 'lost');

    const outcomes = await Promise.all(
      [...good.slice(0, 5), bad, ...good.slice(5)].map((sent) =>
        queue.enqueue(sent, '5511888880000').then(
          () => 'ok',
          () => 'failed',
        ),
      ),
    );

    expect(outcomes).toEqual([...Array(5).fill('ok'), 'failed', ...Array(5).fill('ok')]);
    const queued: Array<{ n: number }> = await db.dataSource.query(`SELECT count(*)::int AS n FROM send_queue WHERE instance_id = $1`, [instance]);
    expect(queued[0].n).toBe(10);
    const orphan: Array<{ n: number }> = await db.dataSource.query(`SELECT count(*)::int AS n FROM messages WHERE message_id = $1`, [bad.messageId]);
    expect(orphan[0].n).toBe(0);
    await bus.close();
  });
});
