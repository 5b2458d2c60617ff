import type { Server } from 'node:http';
import { type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type Bus, NatsBus } from '@gw/bus';
import { openDatabase } from '@gw/persistence';
import { type Logger, PinoNestLogger, startHealthServer } from '@gw/platform';
import type { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import type { WebhookRelayConfig } from './webhook-relay-config';

export interface RunningWebhookRelay {
  app: INestApplicationContext;
  healthPort: number;
  /** Stops in reverse order of start: health port, Nest providers, NATS (drained), Postgres. */
  close(): Promise<void>;
}

/** Opens Postgres (migrated) and NATS, starts the Nest context, then the health port. */
export async function startWebhookRelay(config: WebhookRelayConfig, logger: Logger): Promise<RunningWebhookRelay> {
  let dataSource: DataSource | undefined;
  let bus: Bus | undefined;
  let app: INestApplicationContext | undefined;
  let health: Server | undefined;
  const close = async () => {
    const server = health;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await app?.close().catch((error: unknown) => logger.error({ err: error }, 'closing the application failed'));
    await bus?.close().catch(() => undefined);
    await dataSource?.destroy().catch(() => undefined);
  };
  try {
    dataSource = await openDatabase({ url: config.databaseUrl });
    bus = await NatsBus.connect(config.natsUrl, 'webhook-relay');
    app = await NestFactory.createApplicationContext(AppModule.register({ config, dataSource, bus, logger }), {
      logger: new PinoNestLogger(logger.child({ component: 'nest' })),
      abortOnError: false,
    });
    const opened = { dataSource, bus };
    const started = await startHealthServer(
      config.healthPort,
      {
        postgres: async () => void (await opened.dataSource.query('SELECT 1')),
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
