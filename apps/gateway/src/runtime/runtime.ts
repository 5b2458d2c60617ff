import { Bus, InProcessBus, NatsBus } from '@gw/bus';
import { openDatabase, type Database } from '@gw/persistence';
import { type EmbeddedDatabase, type Logger, startEmbeddedPostgres } from '@gw/platform';
import type { GatewayConfig } from './gateway-config';

export interface OpenedRuntime {
  dataSource: Database;
  bus: Bus;
  /** True when every service runs in this process over the in-process bus. */
  embedded: boolean;
  close(): Promise<void>;
}

/** Postgres, given (DATABASE_URL) or embedded; `shareRunning`: use a running gateway's embedded server. */
export async function openStore(
  config: GatewayConfig,
  logger: Logger,
  options: { shareRunning?: boolean } = {},
): Promise<{ dataSource: Database; close(): Promise<void> }> {
  let embeddedDatabase: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    logger.info({ dataDir: config.dataDir }, 'DATABASE_URL not set: starting embedded PostgreSQL');
    embeddedDatabase = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, options);
    databaseUrl = embeddedDatabase.url;
  }
  const dataSource = await openDatabase({ url: databaseUrl, logger }).catch(async (error: unknown) => {
    await embeddedDatabase?.stop().catch(() => undefined);
    throw error;
  });
  return {
    dataSource,
    close: async () => {
      await dataSource.destroy().catch(() => undefined);
      // Last: everything above has written what it had to write.
      await embeddedDatabase?.stop().catch(() => undefined);
    },
  };
}

/** Opens Postgres (given or embedded) and the bus (NATS or in-process). */
export async function openRuntime(config: GatewayConfig, logger: Logger): Promise<OpenedRuntime> {
  const store = await openStore(config, logger);
  const bus: Bus = config.natsUrl ? await NatsBus.connect(config.natsUrl, 'gateway') : new InProcessBus();
  if (!config.natsUrl) logger.info('NATS_URL not set: all services run in this process over the in-process bus');
  return {
    dataSource: store.dataSource,
    bus,
    embedded: !config.natsUrl,
    close: async () => {
      await bus.close().catch(() => undefined);
      await store.close();
    },
  };
}
