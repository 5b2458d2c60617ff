import { NatsBus } from '@gw/bus';
import { ErrorCode, Subjects, type ConnectReply } from '@gw/contracts';
import { InstanceRepository } from '@gw/persistence';
import { openTestDatabase, startPrivateNats, testNatsUrl, type PrivateNats, type TestDatabase } from '@gw/testing';
import { startSimulator, type RunningSimulator } from '@gw/wa-sim';
import pino from 'pino';
import { sessionWorkerConfig } from '../src/config/session-worker.config';
import { SessionWorker } from '../src/session-worker';

jest.setTimeout(30_000);

/** The worker's bus contract over real NATS: queue-group placement, per-instance ops, no responders. */
describe('SessionWorker over NATS', () => {
  let natsUrl: string | null;
  let nats: PrivateNats | null = null;
  let sim: RunningSimulator;
  let db: TestDatabase;
  let workerBus: NatsBus;
  let gatewayBus: NatsBus;
  let worker: SessionWorker;
  const request = <T>(subject: string, data: unknown) => gatewayBus.request<T>(subject, data, { timeoutMs: 20_000 });

  beforeAll(async () => {
    // A NATS of its own: `session.place` is one subject for every worker on a NATS, so on the machine's one
    // another suite's worker could take this one's placements (tools/jest/test.js).
    nats = await startPrivateNats();
    natsUrl = nats?.url ?? (await testNatsUrl());
    if (!natsUrl) return;
    sim = await startSimulator({ initialPrekeyCount: 1000 });
    db = await openTestDatabase();
    workerBus = await NatsBus.connect(natsUrl, 'sessions-test-worker');
    gatewayBus = await NatsBus.connect(natsUrl, 'sessions-test-gateway');
    const config = sessionWorkerConfig({
      workerId: `w-nats-${process.pid}`,
      leaseTtlMs: 8_000,
      queryTimeoutMs: 5_000,
      simulator: { websocketUrl: sim.websocketUrl, rootPublicKey: Buffer.from(sim.rootPublicKey, 'base64') },
    });
    worker = new SessionWorker({ dataSource: db.dataSource, bus: workerBus, config, logger: pino({ level: 'silent' }) });
    await worker.start();
  });
  afterAll(async () => {
    if (!natsUrl) return;
    await worker.stop();
    await workerBus.close();
    await gatewayBus.close();
    await sim.stop();
    await db.close();
    await nats?.stop();
  });

  it('should place an instance, answer its ops while held and stop answering after release', async () => {
    if (!natsUrl) return; // announced by testNatsUrl()
    // unique per run: other workers on a shared NATS must not see our subjects
    const instanceId = `nats${process.pid}${Date.now()}`;
    await new InstanceRepository(db.dataSource).create({ id: instanceId, token: `t-${instanceId}`, name: 'nats' });

    const reply = await request<ConnectReply>(Subjects.place, {
      instanceId,
      connect: { instanceId, browser: 'auto', history: { days: 7, fullSync: false }, requestId: 'nats-1' },
    });
    expect(reply.qrcode).toMatch(/^data:image\/png;base64,/);

    expect(await request(Subjects.instance(instanceId, 'status'), { instanceId })).toEqual({ status: 'connecting', loggedIn: false, jid: null });
    // a two-token op travels on `instance.<id>.privacy.get`
    await expect(request(Subjects.instance(instanceId, 'privacy.get'), { instanceId })).rejects.toMatchObject({ code: ErrorCode.NotConnected });

    expect(await request(Subjects.instance(instanceId, 'release'), { instanceId })).toEqual({ released: true });
    await expect(request(Subjects.instance(instanceId, 'status'), { instanceId })).rejects.toMatchObject({ code: ErrorCode.NoSession });
  });
});
