import 'reflect-metadata';
import { join } from 'node:path';
import { createLogger, loadConfigOrExit } from '@gw/platform';
import { startSimulator } from '@gw/wa-sim';
import { SettingsRepository } from '@gw/persistence';
import { AdminTokenService } from './admin/admin-token.service';
import { embeddedServices } from './runtime/embedded-services';
import { loadGatewayConfig } from './runtime/gateway-config';
import { createHttpApp } from './runtime/http-app';
import { openRuntime, openStore } from './runtime/runtime';

/** For people, not for the log stream: stdout carries one JSON object per line (LOG_FORMAT=json). */
const say = (text: string) => process.stderr.write(`${text}\n`);

/**
 * `npm run admin-token` (`main.js admin-token [--sandbox]`): rotates the operator's token and prints the
 * new one, whether the gateway runs or not; the only way back in when the token printed at first start
 * is lost (only its hash is stored).
 */
async function rotateAdminToken(): Promise<void> {
  const config = loadConfigOrExit((env) => loadGatewayConfig(env));
  const logger = createLogger('gateway', config.logLevel === 'info' ? 'warn' : config.logLevel, { format: config.logFormat });
  const store = await openStore(config, logger, { shareRunning: true });
  try {
    const { token } = await new AdminTokenService(new SettingsRepository(store.dataSource), logger).rotate();
    say(`New admin token for ${config.databaseUrl ? 'DATABASE_URL' : config.dataDir} (the old one no longer works; ADMIN_TOKEN is ignored from now on):`);
    process.stdout.write(`${token}\n`);
  } finally {
    await store.close();
  }
}

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
        // Its phones, linked devices and certificate root survive restarts, so sandbox pairings do too.
        stateDir: join(config.dataDir, 'simulator'),
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
  const app = await createHttpApp(
    { config, dataSource: runtime.dataSource, bus: runtime.bus, logger, embedded },
    { simulatorControlUrl: simulator?.controlUrl },
  );
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close().catch(() => undefined);
    await simulator?.stop().catch(() => undefined);
    await runtime.close();
    const code = (error as NodeJS.ErrnoException).code;
    throw code === 'EADDRINUSE' ? new Error(`port ${config.port} is in use; set PORT to a free port`) : error;
  }
  // Only once the gateway listens, so a start that fails does not use up a first token nobody can read.
  const { generated } = await app.get(AdminTokenService).initialise(config.adminToken);
  if (generated) {
    // Printed once, on the first start; only its hash is stored (npm run admin-token makes a new one).
    say(`\nAdmin token (shown once; npm run admin-token${config.sandbox ? ' -- --sandbox' : ''} makes a new one): ${generated}\n`);
  }
  logger.info({ port: config.port, embedded: runtime.embedded, sandbox: config.sandbox }, 'gateway listening');
  say(`Console: http://localhost:${config.port}/manager (sign in with the admin token)`);
  if (simulator) say(`Sandbox simulator control API: ${simulator.controlUrl} (its phones are also in the console)`);

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

const command = process.argv[2] === 'admin-token' ? rotateAdminToken : main;
command().catch((error: unknown) => {
  process.stderr.write(
    `${JSON.stringify({ level: 'fatal', msg: command === main ? 'gateway failed to start' : 'admin-token failed', err: String((error as Error)?.stack ?? error) })}\n`,
  );
  process.exit(1);
});
