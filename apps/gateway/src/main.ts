import 'reflect-metadata';
import { createLogger, loadConfigOrExit } from '@gw/platform';
import { readWebhookRelayConfig, WebhookRelayModule } from '@gw/relay';
import { AdminTokenService } from './admin/admin-token.service';
import { loadGatewayConfig } from './runtime/gateway-config';
import { createHttpApp } from './runtime/http-app';
import { openRuntime } from './runtime/runtime';

async function main(): Promise<void> {
  const config = loadConfigOrExit((env) => loadGatewayConfig(env));
  const logger = createLogger('gateway', config.logLevel);
  const runtime = await openRuntime(config, logger);
  const embedded = runtime.embedded
    ? [WebhookRelayModule.register({ dataSource: runtime.dataSource, bus: runtime.bus, config: loadConfigOrExit((env) => readWebhookRelayConfig(env)), logger })]
    : [];
  const app = await createHttpApp({ config, dataSource: runtime.dataSource, bus: runtime.bus, logger, embedded });
  const { generated } = await app.get(AdminTokenService).initialise(config.adminToken);
  if (generated) {
    // Printed once, on the first start; only its hash is stored.
    process.stdout.write(`\nAdmin token (shown once, keep it): ${generated}\n\n`);
  }
  await app.listen({ port: config.port, host: config.host });
  logger.info({ port: config.port, embedded: runtime.embedded }, 'gateway listening');

  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    await app.close().catch(() => undefined);
    await runtime.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${JSON.stringify({ level: 'fatal', msg: 'gateway failed to start', err: String((error as Error)?.stack ?? error) })}\n`);
  process.exit(1);
});
