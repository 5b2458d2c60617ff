/** The simulator, the gateway, the worker and the dispatcher, each a process of its own (a role of this bench). */
import pino from 'pino';
import { PrefixedBus } from '../support/processes';
import { args, INSTANCES, NATS_URL, type Setup, type SimInfo, STORM } from './options';

/** The children's logs: silent unless `--log <level>` (then on stderr). */
function childLogger() {
  const level = args.get('log');
  return level ? pino({ level }, pino.destination(2)) : pino({ level: 'silent' });
}

async function openBus(name: string, prefix: string) {
  const { NatsBus } = await import('@gw/bus');
  return new PrefixedBus(await NatsBus.connect(NATS_URL, name), prefix);
}

export async function runSim(): Promise<void> {
  const { startSimulator } = await import('@gw/wa-sim');
  const sim = await startSimulator({ logLevel: 'silent', initialPrekeyCount: 1000, media: false });
  process.send?.({ websocketUrl: sim.websocketUrl, controlUrl: sim.controlUrl, rootPublicKey: sim.rootPublicKey } satisfies SimInfo);
  process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
}

export async function runGateway(setup: Setup): Promise<void> {
  const { openDatabase } = await import('@gw/persistence');
  const { EnvReader } = await import('@gw/platform');
  const { loadGatewayConfig } = await import('../../apps/gateway/src/runtime/gateway-config');
  const { createHttpApp } = await import('../../apps/gateway/src/http-app');
  const dataSource = await openDatabase({ url: setup.databaseUrl, schema: setup.schema, poolSize: 10 });
  const bus = await openBus('bench-chaos-gateway', setup.prefix);
  const config = loadGatewayConfig(
    new EnvReader({ DATABASE_URL: setup.databaseUrl, NATS_URL, PORT: '0', LOG_LEVEL: 'silent', RPC_TIMEOUT_MS: '30000', RATE_LIMIT_INSTANCE: '1000000/s' }),
    [],
  );
  const app = await createHttpApp({ config, dataSource, bus, logger: childLogger() as never });
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.send?.({ baseUrl: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` });
  process.on('disconnect', () => process.exit(0));
}

export async function runWorker(setup: Setup): Promise<void> {
  const { openDatabase } = await import('@gw/persistence');
  const { SessionWorker, sessionWorkerConfig } = await import('@gw/sessions');
  const dataSource = await openDatabase({ url: setup.databaseUrl, schema: setup.schema, poolSize: 10 });
  const bus = await openBus('bench-chaos-worker', setup.prefix);
  const worker = new SessionWorker({
    dataSource,
    bus,
    logger: childLogger() as never,
    config: sessionWorkerConfig({
      workerId: `chaos-${setup.prefix}`,
      capacity: INSTANCES + STORM + 10,
      simulator: { websocketUrl: setup.sim.websocketUrl, rootPublicKey: Buffer.from(setup.sim.rootPublicKey, 'base64') },
      // Where a session learns the current WhatsApp Web version after a 405 (the client-outdated mode).
      waVersionUrl: `${setup.sim.controlUrl}/sim/wa-version`,
    }),
  });
  await worker.start();
  process.send?.({ started: true });
  process.on('disconnect', () => {
    setTimeout(() => process.exit(1), 25_000).unref();
    void worker.stop().finally(() => process.exit(0));
  });
}

export async function runDispatcher(setup: Setup): Promise<void> {
  const { openDatabase, CampaignRepository, ChatRepository, InstanceRepository, LeaseRepository, SendLimitRepository, SendQueueRepository } =
    await import('@gw/persistence');
  const { AsyncDispatcher, ASYNC_DISPATCHER_DEFAULTS, CampaignScheduler, CAMPAIGN_SCHEDULER_DEFAULTS } = await import('@gw/dispatch');
  const dataSource = await openDatabase({ url: setup.databaseUrl, schema: setup.schema, poolSize: 10 });
  const bus = await openBus('bench-chaos-dispatcher', setup.prefix);
  const logger = childLogger() as never;
  // As DispatchModule builds them (apps/dispatcher), with the production defaults.
  const dispatcher = new AsyncDispatcher(
    new SendQueueRepository(dataSource),
    new InstanceRepository(dataSource),
    new ChatRepository(dataSource),
    bus,
    { ...ASYNC_DISPATCHER_DEFAULTS, dispatcherId: `chaos-${setup.prefix}` },
    logger,
    new LeaseRepository(dataSource),
    new SendLimitRepository(dataSource),
  );
  const campaigns = new CampaignScheduler(new CampaignRepository(dataSource), bus, CAMPAIGN_SCHEDULER_DEFAULTS, logger);
  dispatcher.start();
  campaigns.start();
  process.send?.({ started: true });
  process.on('disconnect', () => process.exit(0));
}
