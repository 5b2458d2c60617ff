import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NatsBus } from '@gw/bus';
import { HealthRepository, MetricsRepository, openDatabase, PersistenceModule } from '@gw/persistence';
import {
  configureMetrics,
  createLogger,
  loadConfigOrExit,
  LOG_FORMATS,
  type LogFormat,
  metrics,
  type MetricsConfig,
  PinoNestLogger,
  readMetricsConfig,
  readTracingConfig,
  startHealthServer,
  startTracing,
  stopTracing,
  type EnvReader,
} from '@gw/platform';
import {
  readSessionWorkerConfig,
  SESSION_WORKER,
  SessionWorkerModule,
  SHUTDOWN_DEADLINE_MS,
  type SessionWorker,
  type SessionWorkerConfig,
  type SessionWorkerOptions,
} from '@gw/sessions';

interface AppConfig {
  databaseUrl: string;
  natsUrl: string;
  healthPort: number;
  logLevel: string;
  logFormat: LogFormat;
  worker: SessionWorkerConfig;
  metrics: MetricsConfig;
  /** Exactly one of the two seam variables is set (the seam stays off). */
  halfSeam: boolean;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function readConfig(env: EnvReader): AppConfig {
  env.string('DATABASE_URL');
  env.string('NATS_URL');
  return {
    databaseUrl: env.url('DATABASE_URL', ['postgres:', 'postgresql:']) as string,
    natsUrl: env.url('NATS_URL', ['nats:', 'tls:']) as string,
    healthPort: env.port('HEALTH_PORT', 8082),
    logLevel: env.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: env.oneOf('LOG_FORMAT', LOG_FORMATS, 'json'),
    worker: readSessionWorkerConfig(env),
    metrics: readMetricsConfig(env),
    halfSeam: !env.optionalString('WA_WEBSOCKET_URL') !== !env.optionalString('WA_CERT_ROOT_PUBLIC_KEY'),
  };
}

/** The process's modules: the repositories over its DataSource (injected into the worker), and the worker. */
@Module({})
class SessionWorkerAppModule {
  static register(options: Omit<SessionWorkerOptions, 'repositories'>): DynamicModule {
    return { module: SessionWorkerAppModule, imports: [PersistenceModule.forDataSource(options.dataSource), SessionWorkerModule.register(options)] };
  }
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(readConfig);
  // OTEL_EXPORTER_OTLP_ENDPOINT: spans as `session-worker`, before the logger (trace_id in its lines).
  const tracingNote = startTracing(loadConfigOrExit(readTracingConfig));
  const logger = createLogger('session-worker', config.logLevel, { format: config.logFormat });
  if (tracingNote) logger.warn(tracingNote);
  if (config.halfSeam) {
    logger.warn('only one of WA_WEBSOCKET_URL / WA_CERT_ROOT_PUBLIC_KEY is set; the simulator seam needs both and stays off');
  }

  configureMetrics(config.metrics);
  const dataSource = await openDatabase({ url: config.databaseUrl, logger });
  const bus = await NatsBus.connect(config.natsUrl, `session-worker-${config.worker.workerId}`);
  const app = await NestFactory.createApplicationContext(SessionWorkerAppModule.register({ dataSource, bus, config: config.worker, logger }), {
    logger: new PinoNestLogger(logger),
  });
  const database = app.get(HealthRepository);
  const worker = app.get<SessionWorker>(SESSION_WORKER);
  // Its own pool; the instances by status come from the gateway's /metrics (one reader, however many workers).
  const repository = app.get(MetricsRepository);
  metrics().useSources({ databasePool: () => repository.databasePool(), workerInstances: () => repository.instancesHeldBy(config.worker.workerId) });
  const health = await startHealthServer(config.healthPort, {
    postgres: () => database.ping(),
    nats: () => bus.ping(),
    // 503 until the worker has taken its part of the instances and opened them (ADR 0057): a rollout's gate.
    settled: () => worker.settled(),
  });
  logger.info({ healthPort: health.port, workerId: config.worker.workerId }, 'session worker ready');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // SHUTDOWN_DEADLINE_MS (25 s, from @gw/sessions): past it the process exits whatever still runs. The
    // worker's drain is bounded below it by construction (drainBudgetMs, ADR 0039): every instance is
    // handed over by then, or, when its Signal state could not be stored, left for its lease to lapse.
    const deadline = setTimeout(() => {
      logger.error('shutdown deadline passed; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    try {
      await app.close(); // closes sessions without logout, releases leases, removes the worker row
      await bus.close();
      await dataSource.destroy();
      await new Promise<void>((resolve) => health.server.close(() => resolve()));
      await stopTracing();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'session worker failed to start', err: String((error as Error)?.stack ?? error) })}\n`);
  process.exit(1);
});
