import type { Server } from 'node:http';
import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type Bus, NatsBus } from '@gw/bus';
import { type DataSourceOptions, HealthRepository, MetricsRepository, openDatabase, type Database } from '@gw/persistence';
import {
  ConfigError,
  configureMetrics,
  createLogger,
  type EnvReader,
  loadConfigOrExit,
  LOG_FORMATS,
  type LogFormat,
  type Logger,
  metrics,
  type MetricsConfig,
  type MetricsSources,
  PinoNestLogger,
  readMetricsConfig,
  readTracingConfig,
  startHealthServer,
  startTracing,
  stopTracing,
} from '@gw/platform';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** What every background service (dispatcher, webhook relay) reads for its host. */
export interface ServiceHostConfig {
  databaseUrl: string;
  natsUrl: string;
  /** Port of `GET /health` and `GET /ready`. */
  healthPort: number;
  healthHost: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** `json` lines for machines (default), `pretty` for people. */
  logFormat: LogFormat;
  /** METRICS_PER_INSTANCE (the health port's `/metrics` takes no token: it is the cluster's, not the public's). */
  metrics?: MetricsConfig;
}

/** DATABASE_URL and NATS_URL (required), HEALTH_PORT, HEALTH_HOST, LOG_LEVEL, LOG_FORMAT. */
export function readServiceHostConfig(env: EnvReader, defaultHealthPort: number): ServiceHostConfig {
  const required = (name: string, protocols: string[]) => {
    const url = env.url(name, protocols);
    if (url === undefined) throw new ConfigError(name, 'is required');
    return url;
  };
  return {
    databaseUrl: required('DATABASE_URL', ['postgres:', 'postgresql:']),
    natsUrl: required('NATS_URL', ['nats:', 'tls:']),
    healthPort: env.port('HEALTH_PORT', defaultHealthPort),
    healthHost: env.string('HEALTH_HOST', '0.0.0.0'),
    logLevel: env.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    logFormat: env.oneOf('LOG_FORMAT', LOG_FORMATS, 'json'),
    metrics: readMetricsConfig(env),
  };
}

export interface RunningService {
  app: INestApplicationContext;
  healthPort: number;
  /** Stops in reverse order of start: health port, Nest providers, NATS (drained), Postgres. */
  close(): Promise<void>;
}

/** After a stop signal, the longest we wait for a clean shutdown before exiting anyway. */
const SHUTDOWN_DEADLINE_MS = 10_000;

/**
 * Opens Postgres (migrated) and NATS, starts the service's Nest context on them, then the health port
 * (`GET /health`, `GET /ready`, `GET /metrics`). Anything opened is closed again when a later step
 * fails. The module registers `PersistenceModule.forDataSource(dataSource)`: the health check asks its
 * HealthRepository. `/metrics` reports the pool of this DataSource, and what `metricsSources` reads
 * from Postgres for the service's own area (the queue for the dispatcher, the backlog for the relay).
 * `databaseOptions.keepConnections`: the pool never closes an idle connection (the relay, which warms them).
 */
export async function startService(
  name: string,
  config: ServiceHostConfig,
  logger: Logger,
  module: (runtime: { dataSource: Database; bus: Bus }) => DynamicModule,
  metricsSources: (repository: MetricsRepository) => MetricsSources = () => ({}),
  databaseOptions: Pick<DataSourceOptions, 'keepConnections'> = {},
): Promise<RunningService> {
  let dataSource: Database | undefined;
  let bus: Bus | undefined;
  let app: INestApplicationContext | undefined;
  let health: Server | undefined;
  let sources: MetricsSources | undefined;
  if (config.metrics) configureMetrics(config.metrics);
  const close = async () => {
    if (sources) metrics().dropSources(sources);
    const server = health;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await app?.close().catch((error: unknown) => logger.error({ err: error }, 'closing the application failed'));
    await bus?.close().catch(() => undefined);
    await dataSource?.destroy().catch(() => undefined);
  };
  try {
    dataSource = await openDatabase({ url: config.databaseUrl, keepConnections: databaseOptions.keepConnections, logger });
    bus = await NatsBus.connect(config.natsUrl, name);
    app = await NestFactory.createApplicationContext(module({ dataSource, bus }), {
      logger: new PinoNestLogger(logger.child({ component: 'nest' })),
      abortOnError: false,
    });
    const database = app.get(HealthRepository);
    const repository = app.get(MetricsRepository);
    sources = { databasePool: () => repository.databasePool(), ...metricsSources(repository) };
    metrics().useSources(sources);
    const opened = { bus };
    const started = await startHealthServer(
      config.healthPort,
      {
        postgres: () => database.ping(),
        nats: () => opened.bus.ping(),
      },
      config.healthHost,
    );
    health = started.server;
    return { app, healthPort: started.port, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A service's `main`: config from the environment (or exit naming the variable), start, stop on SIGTERM/SIGINT. */
export function runService<C extends ServiceHostConfig>(
  name: string,
  loadConfig: (env: EnvReader) => C,
  start: (config: C, logger: Logger) => Promise<RunningService>,
): void {
  const main = async () => {
    const config = loadConfigOrExit(loadConfig);
    // OTEL_EXPORTER_OTLP_ENDPOINT: spans of this service (`service.name` = name), before the logger (trace_id in its lines).
    const tracingNote = startTracing(loadConfigOrExit(readTracingConfig));
    const logger = createLogger(name, config.logLevel, { format: config.logFormat });
    if (tracingNote) logger.warn(tracingNote);
    const service = await start(config, logger);
    logger.info({ healthPort: service.healthPort }, `${name} started`);
    let stopping = false;
    const shutdown = async (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      setTimeout(() => {
        logger.error('shutdown deadline passed, exiting');
        process.exit(1);
      }, SHUTDOWN_DEADLINE_MS).unref();
      await service.close();
      await stopTracing();
      logger.info('stopped');
      process.exit(0);
    };
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    process.on('SIGINT', () => void shutdown('SIGINT'));
  };
  main().catch((error: unknown) => {
    process.stderr.write(`${JSON.stringify({ level: 'fatal', service: name, msg: 'failed to start', err: String((error as Error)?.stack ?? error) })}\n`);
    process.exit(1);
  });
}
