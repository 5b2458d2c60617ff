import 'reflect-metadata';
import { createLogger, loadConfigOrExit } from '@gw/platform';
import { loadDispatcherConfig } from './dispatcher-config';
import { startDispatcher } from './runtime';

/** After a stop signal, the longest we wait for a clean shutdown before exiting anyway. */
const SHUTDOWN_DEADLINE_MS = 10_000;

async function main(): Promise<void> {
  const config = loadConfigOrExit((env) => loadDispatcherConfig(env));
  const logger = createLogger('dispatcher', config.logLevel);
  const dispatcher = await startDispatcher(config, logger);
  logger.info({ healthPort: dispatcher.healthPort }, 'dispatcher started');

  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error('shutdown deadline passed, exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    await dispatcher.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${JSON.stringify({ level: 'fatal', service: 'dispatcher', msg: 'failed to start', err: String((error as Error)?.stack ?? error) })}\n`);
  process.exit(1);
});
