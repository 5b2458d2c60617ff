import { type Bus, InProcessBus, NatsBus } from '@gw/bus';
import type { SendRequest } from '@gw/contracts';
import { InstanceRepository, SendQueueRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { openTestDatabase, testNatsUrl, type TestDatabase } from '@gw/testing';
import { randomBytes } from 'node:crypto';
import { AsyncDispatcher } from '../src/async-dispatcher';
import { AsyncQueue } from '../src/async-queue';
import { FakeWorker, sleep, waitFor } from './support/fake-worker';
import { dispatcherRepositoriesOf } from './support/repositories';

/**
 * Issue #39's rolling restart, for dispatchers: one stopped (SIGTERM: the Nest module's shutdown calls
 * stop()) while it sends an instance's queue finishes the send in flight and gives the lane back at once,
 * so another dispatcher sends the rest right away instead of after the claim lapses (30 s here). Over
 * Postgres, and NATS when the machine has it, as deployed.
 */
describe('a dispatcher stopped mid-lane', () => {
  const CLAIM_MS = 30_000;
  let db: TestDatabase;
  let bus: Bus;
  let worker: FakeWorker;
  let queue: AsyncQueue;
  const dispatchers: AsyncDispatcher[] = [];
  const logger = createLogger('dispatch-stop-test', 'silent');

  const dispatcher = (id: string) => {
    const sut = new AsyncDispatcher(
      ...dispatcherRepositoriesOf(db.dataSource),
      bus,
      {
        dispatcherId: id,
        claimMs: CLAIM_MS,
        pollIntervalMs: 100,
        maxLanes: 16,
        sendTimeoutMs: 5_000,
        maxAttempts: 3,
        retryBackoffMs: [30],
        disconnectedRetryMs: 100,
      },
      logger,
    );
    dispatchers.push(sut);
    sut.start();
    return sut;
  };

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  beforeEach(async () => {
    const nats = await testNatsUrl();
    bus = nats ? await NatsBus.connect(nats, 'dispatch-stop-test') : new InProcessBus();
    worker = new FakeWorker(bus, db.dataSource);
    worker.workMs = 300;
    queue = new AsyncQueue(new SendQueueRepository(db.dataSource), bus, { drainTimeoutMs: 1_500, drainPollMs: 20 });
  });
  afterEach(async () => {
    for (const sut of dispatchers.splice(0)) await sut.stop();
    worker.close();
    await bus.close();
  });
  afterAll(() => db.close());

  /** Five queued sends of one instance; dispatcher A takes the lane and is stopped during its first send; B starts. */
  const stopMidLane = async () => {
    const instanceId = `i${randomBytes(6).toString('hex')}`;
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: `t${instanceId}`, name: instanceId });
    worker.serve(instanceId);
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) {
      const messageId = `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
      const request: SendRequest = {
        instanceId,
        recordId: `r${randomBytes(4).toString('hex').slice(0, 7)}`,
        messageId,
        chatJid: '5511999990000@s.whatsapp.net',
        content: { kind: 'text', text: `message ${n}`, linkPreview: null },
        delayMs: 0,
        record: {
          sendFunction: 'SendTextMessage',
          sendPayload: { number: '5511999990000', text: `message ${n}` },
          trackSource: '',
          trackId: '',
          sendFolderId: '',
        },
      };
      await queue.enqueue(request, '5511888880000');
      ids.push(messageId);
    }
    const a = dispatcher('d-stopped');
    await waitFor(() => worker.calls.length === 1, 10_000);
    await a.stop();
    expect(worker.calls).toHaveLength(1);
    dispatcher('d-next');
    return { instanceId, ids };
  };
  const sent = async (instanceId: string) =>
    (await db.dataSource.query(`SELECT message_id FROM messages WHERE instance_id = $1 AND status = 'Sent'`, [instanceId])).length as number;

  it('should finish the send in flight and give the lane back at once: the next dispatcher sends the rest, once each, in order', async () => {
    const { instanceId, ids } = await stopMidLane();
    await waitFor(async () => (await sent(instanceId)) === 5, 5_000);
    expect(ids.map((id) => worker.relayCount(id))).toEqual([1, 1, 1, 1, 1]);
    expect(worker.relayOrder.get(instanceId)).toEqual(ids);
  }, 30_000);

  it('(control) would leave the next dispatcher waiting for the claim to lapse had the stop not given the lane back', async () => {
    // The lane is given back by the last send's completion (complete without going on) or by release: neither
    // lets go of the claim here; the completion only ends its head.
    const release = jest.spyOn(SendQueueRepository.prototype, 'release').mockResolvedValue(undefined);
    const complete = jest.spyOn(SendQueueRepository.prototype, 'complete').mockImplementation(async (_claim, queueId) => {
      await db.dataSource.query(`DELETE FROM send_queue WHERE id = $1`, [queueId]);
      return { gapMs: 0, next: null };
    });
    let instanceId: string;
    try {
      ({ instanceId } = await stopMidLane());
    } finally {
      release.mockRestore();
      complete.mockRestore();
    }
    await sleep(3_000);
    expect(await sent(instanceId)).toBe(1);
  }, 30_000);
});
