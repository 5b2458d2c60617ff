import { InProcessBus } from '@gw/bus';
import { type SendRequest, Subjects } from '@gw/contracts';
import { CampaignRepository, InstanceRepository, SendQueueRepository } from '@gw/persistence';
import { createLogger } from '@gw/platform';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { randomBytes } from 'node:crypto';
import { AsyncDispatcher } from '../src/async-dispatcher';
import { AsyncQueue } from '../src/async-queue';
import { CampaignScheduler, createCampaign } from '../src/campaign-scheduler';
import { FakeWorker, sleep, waitFor } from './support/fake-worker';
import { dispatcherRepositoriesOf } from './support/repositories';

jest.setTimeout(20_000);

describe(CampaignScheduler.name, () => {
  let db: TestDatabase;
  let bus: InProcessBus;
  let worker: FakeWorker;
  let dispatcher: AsyncDispatcher;
  let scheduler: CampaignScheduler;
  let campaigns: CampaignRepository;
  const logger = createLogger('campaign-test', 'silent');

  const newInstance = async () => {
    const id = `i${randomBytes(6).toString('hex')}`;
    await new InstanceRepository(db.dataSource).create({ id, token: `t${id}`, name: id, msgDelayMin: 0, msgDelayMax: 0 });
    worker.serve(id);
    return id;
  };
  const request = (instanceId: string, text: string): SendRequest => ({
    instanceId,
    recordId: `r${randomBytes(4).toString('hex').slice(0, 7)}`,
    messageId: `3EB0${randomBytes(9).toString('hex').toUpperCase()}`,
    chatJid: '5511999990000@s.whatsapp.net',
    content: { kind: 'text', text, linkPreview: null },
    delayMs: 0,
    record: { sendFunction: 'SendTextMessage', sendPayload: { text }, trackSource: '', trackId: '', sendFolderId: '' },
  });
  const campaign = async (instanceId: string, count: number, options: { delayMin?: number; delayMax?: number; at?: Date; name?: string } = {}) => {
    const id = `f${randomBytes(5).toString('hex')}`;
    const requests = Array.from({ length: count }, (_, n) => request(instanceId, `${id} #${n}`));
    await createCampaign(
      campaigns,
      { id, name: options.name ?? id, info: 'test', scheduledFor: options.at ?? new Date(), delayMin: options.delayMin ?? 0, delayMax: options.delayMax ?? 0 },
      requests,
      '5511888880000',
      instanceId,
    );
    return { id, ids: requests.map((entry) => entry.messageId) };
  };
  const sentOf = (instanceId: string) => worker.calls.filter((call) => call.instanceId === instanceId);
  const folder = (instanceId: string, id: string) => campaigns.find(instanceId, id);

  beforeAll(async () => {
    db = await openTestDatabase();
    campaigns = new CampaignRepository(db.dataSource);
  });
  beforeEach(() => {
    bus = new InProcessBus();
    worker = new FakeWorker(bus, db.dataSource);
    dispatcher = new AsyncDispatcher(
      ...dispatcherRepositoriesOf(db.dataSource),
      bus,
      {
        dispatcherId: 'c',
        claimMs: 600,
        pollIntervalMs: 50,
        maxLanes: 16,
        sendTimeoutMs: 2_000,
        maxAttempts: 3,
        retryBackoffMs: [30],
        disconnectedRetryMs: 100,
      },
      logger,
    );
    scheduler = new CampaignScheduler(campaigns, bus, { pollIntervalMs: 30, batch: 50 }, logger);
    dispatcher.start();
    scheduler.start();
  });
  afterEach(async () => {
    await scheduler.stop();
    await dispatcher.stop();
    worker.close();
  });
  afterAll(async () => {
    await db?.close();
  });

  it('should send every message in order, stamp send_folder_id, count and finish the folder with sender events', async () => {
    const instanceId = await newInstance();
    const { id, ids } = await campaign(instanceId, 3);
    await waitFor(async () => (await folder(instanceId, id))?.status === 'done');
    expect(worker.relayOrder.get(instanceId)).toEqual(ids);
    const row = await folder(instanceId, id);
    expect(row).toMatchObject({ logTotal: 3, logSuccess: 3, logFailed: 0 });
    const stamped: Array<{ n: string }> = await db.dataSource.query(`SELECT count(*) AS n FROM messages WHERE instance_id = $1 AND send_folder_id = $2`, [
      instanceId,
      id,
    ]);
    expect(Number(stamped[0].n)).toBe(3);
    const events: Array<{ payload: Record<string, unknown> }> = await db.dataSource.query(
      `SELECT payload FROM outbox_events WHERE instance_id = $1 AND event_type = 'sender' ORDER BY id`,
      [instanceId],
    );
    expect(events.map((event) => event.payload.status)).toEqual(['sending', 'done']);
    expect(events[1].payload).toMatchObject({ EventType: 'sender', folder_id: id, count: 3, log_sucess: 3, instanceName: instanceId });
  });

  it('should not send before scheduled_for', async () => {
    const instanceId = await newInstance();
    const at = new Date(Date.now() + 700);
    const { id } = await campaign(instanceId, 1, { at });
    await sleep(400);
    expect(sentOf(instanceId)).toHaveLength(0);
    expect((await folder(instanceId, id))?.status).toBe('scheduled');
    await waitFor(() => sentOf(instanceId).length === 1, 5_000);
    expect(sentOf(instanceId)[0].at).toBeGreaterThanOrEqual(at.getTime() - 5);
  });

  it('should pace by the folder delay, not the instance delay', async () => {
    const instanceId = await newInstance();
    const { id } = await campaign(instanceId, 3, { delayMin: 0.4, delayMax: 0.4 });
    await waitFor(async () => (await folder(instanceId, id))?.status === 'done', 10_000);
    const calls = sentOf(instanceId);
    expect(calls).toHaveLength(3);
    for (let n = 1; n < calls.length; n++) expect(calls[n].at - calls[n - 1].doneAt!).toBeGreaterThanOrEqual(390);
  });

  it('should not hold back the instance other async sends behind a paced campaign', async () => {
    const instanceId = await newInstance();
    await campaign(instanceId, 3, { delayMin: 1, delayMax: 1 });
    await waitFor(() => sentOf(instanceId).length === 1);
    const other = request(instanceId, 'not in the campaign');
    await new AsyncQueue(new SendQueueRepository(db.dataSource), bus).enqueue(other, '5511888880000');
    await waitFor(() => worker.relayCount(other.messageId) === 1, 900);
    expect(sentOf(instanceId)).toHaveLength(2);
  });

  it('should hold a stopped folder until continue', async () => {
    const instanceId = await newInstance();
    const { id, ids } = await campaign(instanceId, 4, { delayMin: 0, delayMax: 0, at: new Date(Date.now() + 300) });
    expect(await campaigns.pause(instanceId, id)).toBe('paused');
    await sleep(600);
    expect(sentOf(instanceId)).toHaveLength(0);
    expect(await campaigns.resume(instanceId, id)).toBe('scheduled');
    await waitFor(async () => (await folder(instanceId, id))?.status === 'done');
    expect(worker.relayOrder.get(instanceId)).toEqual(ids);
  });

  it('should cancel what was not sent and remove the folder on delete', async () => {
    const instanceId = await newInstance();
    const { id, ids } = await campaign(instanceId, 4, { delayMin: 0.5, delayMax: 0.5 });
    await waitFor(() => sentOf(instanceId).length === 1);
    const removed = await campaigns.remove(instanceId, id);
    expect(removed?.canceled).toBe(3);
    expect(await folder(instanceId, id)).toBeNull();
    await sleep(700);
    expect(sentOf(instanceId)).toHaveLength(1);
    const rows: Array<{ message_id: string; status: string }> = await db.dataSource.query(`SELECT message_id, status FROM messages WHERE instance_id = $1`, [
      instanceId,
    ]);
    const status = new Map(rows.map((row) => [row.message_id, row.status]));
    expect(ids.map((messageId) => status.get(messageId))).toEqual(['Sent', 'Canceled', 'Canceled', 'Canceled']);
  });

  it("should wake one scheduler's look at the due folders per campaign notice, not every scheduler's, and none for a plain send's", async () => {
    let passes = 0;
    class CountingCampaigns extends CampaignRepository {
      override async dueFolders(limit: number): Promise<string[]> {
        passes++;
        return super.dueFolders(limit);
      }
    }
    const notices = new InProcessBus();
    // No polls in the test's time: every pass after the first is a notice's.
    const schedulers = [1, 2].map(() => new CampaignScheduler(new CountingCampaigns(db.dataSource), notices, { pollIntervalMs: 60_000, batch: 50 }, logger));
    for (const one of schedulers) one.start();
    try {
      await waitFor(async () => passes >= 2);
      await sleep(50);
      const started = passes;
      for (let n = 0; n < 5; n++) {
        notices.publish(Subjects.queue('x'), { instanceId: 'x', campaigns: true });
        await sleep(50);
      }
      // A notice to each scheduler made two looks at the same folders (10 here).
      expect(passes - started).toBe(5);
      // A plain async send's notice wakes no scheduler (it made a look each before).
      for (let n = 0; n < 5; n++) {
        notices.publish(Subjects.queue('x'), { instanceId: 'x' });
        await sleep(50);
      }
      expect(passes - started).toBe(5);
    } finally {
      for (const one of schedulers) await one.stop();
      await notices.close();
    }
  });

  it('after a failed pass waits before the next however many queue notices come, stops at once meanwhile, and recovers', async () => {
    let failing = true;
    let passes = 0;
    class FailingCampaigns extends CampaignRepository {
      override async dueFolders(limit: number): Promise<string[]> {
        passes++;
        if (failing) throw new Error('database gone');
        return super.dueFolders(limit);
      }
    }
    const notices = new InProcessBus();
    const failingScheduler = new CampaignScheduler(new FailingCampaigns(db.dataSource), notices, { pollIntervalMs: 1_000, batch: 50 }, logger);
    failingScheduler.start();
    const ticker = setInterval(() => notices.publish(Subjects.queue('x'), { instanceId: 'x', campaigns: true }), 2);
    try {
      await sleep(500);
      // 100 ms, then 200 ms, then 400 ms: without the backoff, a pass (and a log line) per notice.
      expect(passes).toBeGreaterThan(1);
      expect(passes).toBeLessThanOrEqual(5);
      failing = false;
      const recovered = passes;
      await waitFor(async () => passes > recovered + 3);
    } finally {
      clearInterval(ticker);
    }
    failing = true;
    const failedAt = passes;
    await waitFor(async () => passes > failedAt + 2);
    const started = Date.now();
    await failingScheduler.stop();
    expect(Date.now() - started).toBeLessThan(150);
    await notices.close();
  });
});
