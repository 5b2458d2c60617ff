import 'reflect-metadata';
import { createLogger, loadConfigOrExit } from '@gw/platform';
import { startSimulator } from '@gw/wa-sim';
import { AdminTokenService } from './admin/admin-token.service';
import { embeddedServices } from './runtime/embedded-services';
import { loadGatewayConfig } from './runtime/gateway-config';
import { createHttpApp } from './runtime/http-app';
import { openRuntime } from './runtime/runtime';

async function main(): Promise<void> {
  const config = loadConfigOrExit((env) => loadGatewayConfig(env));
  const logger = createLogger('gateway', config.logLevel, { format: config.logFormat });
  const runtime = await openRuntime(config, logger);

  // Sandbox: our WhatsApp simulator in this process, with its control API for the walkthrough.
  const simulator = config.sandbox
    ? await startSimulator({
        wsPort: loadConfigOrExit((env) => env.port('SIM_WS_PORT', 8480)),
        controlPort: loadConfigOrExit((env) => env.port('SIM_CONTROL_PORT', 8481)),
        autoCreateAccounts: true,
      })
    : undefined;
  if (simulator)
    logger.warn(
      { controlUrl: simulator.controlUrl, websocketUrl: simulator.websocketUrl },
      'SANDBOX: sessions connect to the embedded WhatsApp simulator, not to WhatsApp',
    );
  if (config.sandbox && !runtime.embedded) throw new Error('--sandbox needs the embedded default (unset NATS_URL)');

  const embedded = runtime.embedded
    ? loadConfigOrExit((env) =>
        embeddedServices({
          dataSource: runtime.dataSource,
          bus: runtime.bus,
          logger,
          env,
          simulator: simulator && { websocketUrl: simulator.websocketUrl, rootPublicKey: Buffer.from(simulator.rootPublicKey, 'base64') },
        }),
      )
    : [];
  const app = await createHttpApp({ config, dataSource: runtime.dataSource, bus: runtime.bus, logger, embedded });
  const { generated } = await app.get(AdminTokenService).initialise(config.adminToken);
  if (generated) {
    // Printed once, on the first start; only its hash is stored.
    process.stdout.write(`\nAdmin token (shown once, keep it): ${generated}\n\n`);
  }
  await app.listen({ port: config.port, host: config.host });
  logger.info({ port: config.port, embedded: runtime.embedded, sandbox: config.sandbox }, 'gateway listening');
  if (simulator) process.stdout.write(`Sandbox simulator control API: ${simulator.controlUrl}\n`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), 15_000).unref();
    await app.close().catch(() => undefined);
    await simulator?.stop().catch(() => undefined);
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
