import { InProcessBus } from '@gw/bus';
import { ErrorCode, RpcError, Subjects, type SendRequest } from '@gw/contracts';
import { InstanceRepository, SendLimitRepository, SendQueueRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { randomBytes } from 'node:crypto';
import { AsyncDispatcher, type AsyncDispatcherConfig } from '../src/async-dispatcher';
import { AsyncQueue } from '../src/async-queue';
import { FakeWorker, sleep, waitFor } from './support/fake-worker';
import { dispatcherRepositoriesOf } from './support/repositories';

jest.setTimeout(20_000);

describe(AsyncDispatcher.name, () => {
  let db: TestDatabase;
  let bus: InProcessBus;
  let worker: FakeWorker;
  let queue: AsyncQueue;
  const dispatchers: AsyncDispatcher[] = [];
  const logger = createLogger('dispatch-test', (process.env.TEST_LOG_LEVEL as 'silent') ?? 'silent');

  const config = (overrides: Partial<AsyncDispatcherConfig> = {}): AsyncDispatcherConfig => ({
    dispatcherId: `d${dispatchers.length}`,
    claimMs: 600,
    pollIntervalMs: 100,
    maxLanes: 16,
    sendTimeoutMs: 2_000,
    maxAttempts: 3,
    retryBackoffMs: [30],
    disconnectedRetryMs: 100,
    ...overrides,
  });
  const startDispatcher = (overrides: Partial<AsyncDispatcherConfig> = {}) => {
    const sut = new AsyncDispatcher(...dispatcherRepositoriesOf(db.dataSource), bus, config(overrides), logger);
    dispatchers.push(sut);
    sut.start();
    return sut;
  };

  const newInstance = async (delays: { min: number; max: number } = { min: 0, max: 0 }) => {
    const id = `i${randomBytes(6).toString('hex')}`;
    await new InstanceRepository(db.dataSource).create({ id, token: `t${id}`, name: id, msgDelayMin: delays.min, msgDelayMax: delays.max });
    worker.serve(id);
    return id;
  };
  let counter = 0;
  const request = (instanceId: string, text = `message ${++counter}`): SendRequest => ({
    instanceId,
    recordId: `r${randomBytes(4).toString('hex').slice(0, 7)}`,
    messageId: `3EB0${randomBytes(9).toString('hex').toUpperCase()}`,
    chatJid: '5511999990000@s.whatsapp.net',
    content: { kind: 'text', text, linkPreview: null },
    delayMs: 0,
    record: { sendFunction: 'SendTextMessage', sendPayload: { number: '5511999990000', text }, trackSource: '', trackId: '', sendFolderId: '' },
  });
  const enqueue = async (instanceId: string, count: number) => {
    const ids: string[] = [];
    for (let n = 0; n < count; n++) {
      const sent = request(instanceId);
      await queue.enqueue(sent, '5511888880000');
      ids.push(sent.messageId);
    }
    return ids;
  };
  const statuses = async (instanceId: string) => {
    const rows: Array<{ message_id: string; status: string; error: string }> = await db.dataSource.query(
      `SELECT message_id, status, error FROM messages WHERE instance_id = $1`,
      [instanceId],
    );
    return new Map(rows.map((row) => [row.message_id, row]));
  };
  const allSent = (instanceId: string, ids: string[]) => async () => {
    const map = await statuses(instanceId);
    return ids.every((id) => map.get(id)?.status === 'Sent');
  };

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  beforeEach(() => {
    bus = new InProcessBus();
    worker = new FakeWorker(bus, db.dataSource);
    queue = new AsyncQueue(new SendQueueRepository(db.dataSource), bus, { drainTimeoutMs: 1_500, drainPollMs: 20 });
  });
  afterEach(async () => {
    for (const sut of dispatchers.splice(0)) await sut.stop();
    worker.close();
    await bus.close();
  });
  afterAll(async () => {
    await db.close();
  });

  describe('enqueue', () => {
    it('should store the message Queued with its queue row before answering', async () => {
      const instanceId = await newInstance();
      const sent = request(instanceId, 'hello {{name}}');
      const row = await queue.enqueue(sent, '5511888880000');
      expect(row).toMatchObject({
        id: sent.recordId,
        messageId: sent.messageId,
        status: 'Queued',
        fromMe: true,
        text: 'hello {{name}}',
        sendFunction: 'SendTextMessage',
      });
      const queued: Array<{ request: SendRequest }> = await db.dataSource.query(`SELECT request FROM send_queue WHERE instance_id = $1`, [instanceId]);
      expect(queued).toHaveLength(1);
      expect(queued[0].request).toEqual(JSON.parse(JSON.stringify(sent)));
      expect(await queue.status(instanceId, true)).toEqual({
        status: 'queued',
        pending: 1,
        processingNow: false,
        acceptingNewMessages: true,
        sessionReady: true,
        resetting: false,
      });
    });
  });

  describe('dispatch', () => {
    it('should send each instance in acceptance order, one at a time, and resolve placeholders at send time', async () => {
      const first = await newInstance();
      const second = await newInstance();
      const a = await enqueue(first, 12);
      const b = await enqueue(second, 12);
      await db.dataSource
        .query(`INSERT INTO chats (instance_id, id, wa_chatid, wa_name, lead) VALUES ($1, 'c1', '5511999990000@s.whatsapp.net', 'Maria Silva', '{}'::jsonb)`, [
          first,
        ])
        .catch(() => undefined);
      const withName = request(first, 'Oi {{first_name}}');
      await queue.enqueue(withName, '');
      startDispatcher();
      await waitFor(allSent(first, [...a, withName.messageId]));
      await waitFor(allSent(second, b));
      expect(worker.relayOrder.get(first)).toEqual([...a, withName.messageId]);
      expect(worker.relayOrder.get(second)).toEqual(b);
      expect(worker.maxConcurrent.get(first)).toBe(1);
      expect(worker.calls.find((call) => call.messageId === withName.messageId)?.text).toMatch(/^Oi (Maria|)$/);
      expect((await queue.status(first, true)).status).toBe('idle');
    });

    it('should wait a gap within [msg_delay_min, msg_delay_max] after each completed send', async () => {
      const instanceId = await newInstance({ min: 0, max: 1 });
      const ids = await enqueue(instanceId, 4);
      startDispatcher();
      await waitFor(allSent(instanceId, ids), 15_000);
      const calls = ids.map((id) => worker.calls.find((call) => call.messageId === id)!);
      for (let n = 1; n < calls.length; n++) {
        const gap = calls[n].at - calls[n - 1].doneAt!;
        expect(gap).toBeGreaterThanOrEqual(0);
        expect(gap).toBeLessThan(1_000 + 250);
      }
    });

    it('should keep at least msg_delay_min between sends', async () => {
      const instanceId = await newInstance({ min: 1, max: 1 });
      const ids = await enqueue(instanceId, 3);
      startDispatcher();
      await waitFor(allSent(instanceId, ids), 15_000);
      const calls = ids.map((id) => worker.calls.find((call) => call.messageId === id)!);
      for (let n = 1; n < calls.length; n++) {
        const gap = calls[n].at - calls[n - 1].doneAt!;
        expect(gap).toBeGreaterThanOrEqual(1_000 - 20);
        expect(gap).toBeLessThan(1_000 + 250);
      }
    });

    it('should apply a change of delay settings to what is still queued', async () => {
      const instanceId = await newInstance({ min: 30, max: 30 });
      const ids = await enqueue(instanceId, 3);
      startDispatcher();
      await waitFor(() => worker.relayCount(ids[0]) === 1);
      await sleep(300);
      expect(worker.relayCount(ids[1])).toBe(0);
      const changedAt = Date.now();
      await new InstanceRepository(db.dataSource).update(instanceId, { msgDelayMin: 0, msgDelayMax: 0 });
      queue.notify(instanceId);
      await waitFor(allSent(instanceId, ids));
      expect(Date.now() - changedAt).toBeLessThan(1_000);
    });

    it('should let a disconnected instance wait, then drain it without failing anything', async () => {
      const instanceId = await newInstance();
      worker.connected = false;
      const ids = await enqueue(instanceId, 3);
      startDispatcher();
      await waitFor(() => worker.calls.length >= 3);
      expect([...(await statuses(instanceId)).values()].every((row) => row.status === 'Queued')).toBe(true);
      await waitFor(async () => (await queue.status(instanceId, false)).status === 'waiting_connection');
      worker.connected = true;
      await waitFor(allSent(instanceId, ids));
      expect(worker.relayOrder.get(instanceId)).toEqual(ids);
      // The queue entry of the last send is removed right after its record turns Sent.
      const left = async () =>
        Number(((await db.dataSource.query(`SELECT count(*) FROM send_queue WHERE instance_id = $1`, [instanceId])) as Array<{ count: string }>)[0].count);
      await waitFor(async () => (await left()) === 0).catch(() => undefined);
      expect(await left()).toBe(0);
    });

    it('should wait while no worker holds the instance (no responders)', async () => {
      const instanceId = await newInstance();
      worker.unserve(instanceId);
      const ids = await enqueue(instanceId, 2);
      startDispatcher();
      await sleep(400);
      expect((await statuses(instanceId)).get(ids[0])?.status).toBe('Queued');
      worker.serve(instanceId);
      await waitFor(allSent(instanceId, ids));
    });

    it('should retry the same request after a worker timeout without sending it twice', async () => {
      const instanceId = await newInstance();
      worker.firstAnswerDelayMs = 500;
      const ids = await enqueue(instanceId, 2);
      startDispatcher({ sendTimeoutMs: 200 });
      await waitFor(allSent(instanceId, ids));
      await waitFor(async () => Number((await db.dataSource.query(`SELECT count(*) FROM send_queue WHERE instance_id = $1`, [instanceId]))[0].count) === 0);
      expect(worker.calls.filter((call) => call.messageId === ids[0]).length).toBeGreaterThanOrEqual(2);
      expect(ids.map((id) => worker.relayCount(id))).toEqual([1, 1]);
    });

    it('should mark a message Failed after bounded retries and go on with the next', async () => {
      const instanceId = await newInstance();
      worker.failWith = new RpcError(ErrorCode.Internal, 'boom');
      const [doomed] = await enqueue(instanceId, 1);
      startDispatcher({ maxAttempts: 3, retryBackoffMs: [20] });
      await waitFor(async () => (await statuses(instanceId)).get(doomed)?.status === 'Failed');
      expect(worker.calls.filter((call) => call.messageId === doomed)).toHaveLength(3);
      expect((await statuses(instanceId)).get(doomed)?.error).toBe('failed to send: boom');
      // Announced with the Failed status, once (issue 34: every accepted send that ends Failed has its messages_update).
      const events: Array<{ payload: Record<string, any> }> = await db.dataSource.query(
        `SELECT payload FROM outbox_events WHERE instance_id = $1 AND event_type = 'messages_update'`,
        [instanceId],
      );
      expect(events.map((event) => event.payload)).toEqual([
        expect.objectContaining({
          type: 'Failed',
          state: 'Failed',
          error: 'failed to send: boom',
          instanceName: instanceId,
          event: expect.objectContaining({ MessageIDs: [doomed], Chat: '5511999990000@s.whatsapp.net', IsFromMe: 'True', Type: 'Failed' }),
        }),
      ]);
      worker.failWith = null;
      const next = await enqueue(instanceId, 1);
      await waitFor(allSent(instanceId, next));
    });
  });

  describe('clear', () => {
    it('should cancel what is pending, let the send in flight finish, and accept new sends after', async () => {
      const instanceId = await newInstance();
      worker.workMs = 400;
      const ids = await enqueue(instanceId, 5);
      startDispatcher();
      await waitFor(() => worker.calls.length === 1);
      expect(await queue.status(instanceId, true)).toMatchObject({ status: 'processing', pending: 5, processingNow: true });
      const outcome = await queue.clear(instanceId);
      expect(outcome).toEqual({
        ok: true,
        stats: { trackedJobsCleared: 4, bufferedJobsMarkedCanceled: 0, drainedChannelJobs: 1, clearedOverflowJobs: 0, persistedQueuedCanceled: 4 },
      });
      const map = await statuses(instanceId);
      expect(ids.map((id) => map.get(id)?.status)).toEqual(['Sent', 'Canceled', 'Canceled', 'Canceled', 'Canceled']);
      worker.workMs = 0;
      const next = await enqueue(instanceId, 1);
      await waitFor(allSent(instanceId, next));
      expect(ids.slice(1).map((id) => worker.relayCount(id))).toEqual([0, 0, 0, 0]);
      expect(await queue.status(instanceId, true)).toMatchObject({ status: 'idle', pending: 0, resetting: false });
    });

    it('should count waiting sends as buffered and clear an idle queue', async () => {
      const instanceId = await newInstance();
      worker.connected = false;
      await enqueue(instanceId, 3);
      startDispatcher({ disconnectedRetryMs: 60_000 });
      await waitFor(() => worker.calls.length >= 1);
      await waitFor(async () => !(await queue.status(instanceId, false)).processingNow);
      const outcome = await queue.clear(instanceId);
      expect(outcome).toEqual({
        ok: true,
        stats: { trackedJobsCleared: 3, bufferedJobsMarkedCanceled: 1, drainedChannelJobs: 0, clearedOverflowJobs: 0, persistedQueuedCanceled: 3 },
      });
    });

    it('should report a send in flight that did not drain, and refuse a second reset while one runs', async () => {
      const instanceId = await newInstance();
      worker.workMs = 2_500;
      await enqueue(instanceId, 3);
      startDispatcher({ sendTimeoutMs: 5_000 });
      await waitFor(() => worker.calls.length === 1);
      const first = queue.clear(instanceId);
      await sleep(100);
      const second = await queue.clear(instanceId);
      expect(second).toMatchObject({ ok: false, reason: 'resetting' });
      const outcome = await first;
      expect(outcome).toEqual({
        ok: false,
        reason: 'not_drained',
        stats: { trackedJobsCleared: 2, bufferedJobsMarkedCanceled: 0, drainedChannelJobs: 0, clearedOverflowJobs: 0, persistedQueuedCanceled: 2 },
      });
      expect((await queue.status(instanceId, true)).resetting).toBe(false);
    });
  });

  describe('crash safety', () => {
    it('should finish a killed dispatcher’s queue with no loss, no duplicate, order kept', async () => {
      const instanceId = await newInstance();
      worker.workMs = 150;
      const ids = await enqueue(instanceId, 8);
      const doomed = startDispatcher();
      await waitFor(() => worker.calls.length === 3);
      doomed.kill();
      const survivor = startDispatcher();
      await waitFor(allSent(instanceId, ids), 15_000);
      await waitFor(async () => Number((await db.dataSource.query(`SELECT count(*) FROM send_queue WHERE instance_id = $1`, [instanceId]))[0].count) === 0);
      expect(worker.relayOrder.get(instanceId)).toEqual(ids);
      expect(ids.map((id) => worker.relayCount(id))).toEqual(ids.map(() => 1));
      // The send that was in flight when it died was asked again and answered from the store.
      expect(worker.calls.length).toBeGreaterThanOrEqual(ids.length + 1);
      expect(survivor).toBeDefined();
    });

    it('should never send for the same instance from two dispatchers at once', async () => {
      const instances = [await newInstance(), await newInstance(), await newInstance()];
      worker.workMs = 30;
      const queued = new Map<string, string[]>();
      for (const instanceId of instances) queued.set(instanceId, await enqueue(instanceId, 10));
      startDispatcher({ dispatcherId: 'left' });
      startDispatcher({ dispatcherId: 'right' });
      for (const instanceId of instances) await waitFor(allSent(instanceId, queued.get(instanceId)!), 15_000);
      for (const instanceId of instances) {
        expect(worker.maxConcurrent.get(instanceId)).toBe(1);
        expect(worker.relayOrder.get(instanceId)).toEqual(queued.get(instanceId));
      }
      expect(worker.calls).toHaveLength(30);
    });

    it("should wake one dispatcher's claim per queue notice, not every dispatcher's", async () => {
      // Nothing left queued by the tests before (lanes a claim would find and retry), and no polls in the test's
      // time: every claim after the start is a notice's or a lane's end.
      await db.dataSource.query(`DELETE FROM send_queue`);
      await db.dataSource.query(`DELETE FROM send_lanes`);
      startDispatcher({ dispatcherId: 'left', pollIntervalMs: 60_000 });
      startDispatcher({ dispatcherId: 'right', pollIntervalMs: 60_000 });
      // Each dispatcher's first pass runs at its start.
      await sleep(100);
      const claims = jest.spyOn(SendQueueRepository.prototype, 'claimLanes');
      try {
        for (let n = 0; n < 4; n++) {
          const instanceId = await newInstance();
          // The enqueue's notice (AsyncQueue publishes one once the row commits).
          const ids = await enqueue(instanceId, 1);
          await waitFor(allSent(instanceId, ids), 5_000);
          await sleep(50);
        }
        // Per send, the dispatcher the notice woke claims twice: on the notice, and for more work once its lane ends.
        // A notice to each dispatcher added the other's claim, which found nothing (12 here).
        expect(claims.mock.calls.length).toBeGreaterThanOrEqual(4);
        expect(claims.mock.calls.length).toBeLessThanOrEqual(8);
      } finally {
        claims.mockRestore();
      }
    });

    it('should go on with an instance without a gap under the same claim, but let other instances in between', async () => {
      const busy = await newInstance();
      const other = await newInstance();
      const busyIds = await enqueue(busy, 40);
      const otherIds = await enqueue(other, 1);
      startDispatcher({ maxLanes: 1 });
      await waitFor(allSent(busy, busyIds));
      await waitFor(allSent(other, otherIds));
      // One lane at a time: the other instance's send went before the busy one's 40 were all out.
      const order = worker.calls.map((call) => call.messageId);
      expect(order.indexOf(otherIds[0])).toBeLessThan(order.indexOf(busyIds[busyIds.length - 1]));
      expect(worker.relayOrder.get(busy)).toEqual(busyIds);
      expect(worker.maxConcurrent.get(busy)).toBe(1);
    });

    it("should take a lane's heads, and whether WhatsApp limits new chats, in its claim and in each send's completion", async () => {
      const instanceId = await newInstance();
      const ids = await enqueue(instanceId, 5);
      const spies = (['claimLanes', 'takeHead', 'complete', 'release'] as const).map((name) => jest.spyOn(SendQueueRepository.prototype, name));
      const [claims, takes, completions, releases] = spies;
      const limitReads = jest.spyOn(SendLimitRepository.prototype, 'active');
      try {
        const limits = new SendLimitRepository(db.dataSource);
        const sut = new AsyncDispatcher(...dispatcherRepositoriesOf(db.dataSource), bus, config(), logger, undefined, limits);
        dispatchers.push(sut);
        sut.start();
        await waitFor(allSent(instanceId, ids));
        await sleep(100);
        expect(worker.relayOrder.get(instanceId)).toEqual(ids);
        // The claim took the first head, each completion the next; the last completion let the lane go. Before,
        // each head was a statement of its own (6 here: the 5 and the empty one), and the lane's end a seventh.
        expect(takes).not.toHaveBeenCalled();
        expect(releases).not.toHaveBeenCalled();
        expect(completions).toHaveBeenCalledTimes(5);
        expect(claims.mock.calls.length).toBeGreaterThanOrEqual(1);
        // No limit in force: read with each head, not before each send.
        expect(limitReads).not.toHaveBeenCalled();
      } finally {
        for (const spy of spies) spy.mockRestore();
        limitReads.mockRestore();
      }
      expect(await queue.status(instanceId, true)).toMatchObject({ status: 'idle', pending: 0 });
    });

    it('should say with a claimed head whether a limit on new chats is in force', async () => {
      const repository = new SendQueueRepository(db.dataSource);
      const limited = await newInstance();
      const free = await newInstance();
      for (const instanceId of [limited, free]) await enqueue(instanceId, 1);
      await new SendLimitRepository(db.dataSource).record(limited, { kind: 'reachout_timelock', until: new Date(Date.now() + 60_000), detail: 'test' });
      const lanes = await repository.claimLanes('test-claim', 100, 30_000);
      const byInstance = new Map(lanes.map((lane) => [lane.instanceId, lane]));
      expect(byInstance.get(limited)?.head?.limited).toBe(true);
      expect(byInstance.get(free)?.head?.limited).toBe(false);
      for (const lane of lanes) await repository.release(lane);
    });
  });

  it('should wake on the queue subject', () => {
    expect(Subjects.queue('abc')).toBe('queue.abc');
  });
});
