import 'reflect-metadata';
import { ConfigError, createLogger, EnvReader, loadConfigOrExit, readTracingConfig, startTracing, stopTracing } from '@gw/platform';
import { HealthRepository, openDatabase, SettingsRepository } from '@gw/persistence';
import { AdminTokenService } from './admin/admin-token.service';
import { embeddedServices } from './runtime/embedded-services';
import { loadGatewayConfig } from './runtime/gateway-config';
import { createHttpApp } from './http-app';
import { drainHttpApp } from './drain';
import { adminTokenCommand } from './runtime/admin-token-command';
import { openRuntime, openStore } from './runtime/runtime';
import { readSandboxPorts, startSandboxSimulator } from './runtime/sandbox-simulator';

/** For people, not for the log stream: stdout carries one JSON object per line (LOG_FORMAT=json). */
const say = (text: string) => process.stderr.write(`${text}\n`);

/**
 * `npm run -s admin-token [-- --sandbox]` (`main.js admin-token [--sandbox]`): rotates the operator's token and prints the
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

/**
 * `main.js migrate`: applies the pending migrations to DATABASE_URL and exits, the Kubernetes migrations
 * Job that runs before a rollout (k8s/migrate, docs/deploy.md). Every service also migrates when it
 * starts, under the same advisory lock: the Job makes a migration fail before any pod of the new
 * version starts, instead of in the first one. Migrations are expand-then-contract (docs/adr/0029).
 */
async function migrate(): Promise<void> {
  const url = loadConfigOrExit((env) => {
    env.string('DATABASE_URL');
    return env.url('DATABASE_URL', ['postgres:', 'postgresql:']) as string;
  });
  const dataSource = await openDatabase({ url, logger: { warn: (fields, message) => say(`${message}: ${JSON.stringify(fields)}`) } });
  const count = await new HealthRepository(dataSource).migrationsApplied();
  await dataSource.destroy();
  say(`migrations applied: the database has ${count}`);
}

async function main(): Promise<void> {
  const config = loadConfigOrExit((env) => loadGatewayConfig(env));
  // Before the logger: its lines carry trace_id only when tracing was on when it was made.
  const tracingNote = startTracing(loadConfigOrExit(readTracingConfig));
  const logger = createLogger('gateway', config.logLevel, { format: config.logFormat });
  if (tracingNote) logger.warn(tracingNote);
  if (config.sandbox && config.natsUrl) throw new Error('--sandbox needs the embedded default (unset NATS_URL)');
  const sandboxPorts = config.sandbox ? loadConfigOrExit(readSandboxPorts) : undefined;

  // Sandbox: our WhatsApp simulator in this process, with its control API for the walkthrough. Before
  // Postgres: a busy port then stops the start with nothing to clean up.
  const simulator = sandboxPorts ? await startSandboxSimulator(sandboxPorts, config.dataDir).catch(exitOnConfigError) : undefined;
  if (simulator)
    logger.warn(
      { controlUrl: simulator.controlUrl, websocketUrl: simulator.websocketUrl },
      'SANDBOX: sessions connect to the embedded WhatsApp simulator, not to WhatsApp',
    );
  const runtime = await openRuntime(config, logger).catch(async (error: unknown) => {
    await simulator?.stop().catch(() => undefined);
    throw error;
  });

  let app: Awaited<ReturnType<typeof createHttpApp>> | undefined;
  try {
    const embedded = runtime.embedded
      ? await embeddedServices({
          dataSource: runtime.dataSource,
          bus: runtime.bus,
          logger,
          env: new EnvReader(process.env),
          simulator: simulator && { websocketUrl: simulator.websocketUrl, rootPublicKey: Buffer.from(simulator.rootPublicKey, 'base64') },
        })
      : [];
    app = await createHttpApp({ config, dataSource: runtime.dataSource, bus: runtime.bus, logger, embedded }, { simulatorControlUrl: simulator?.controlUrl });
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // Whatever stops the start, nothing it started is left running (the embedded Postgres is a process of its own).
    await app?.close().catch(() => undefined);
    await simulator?.stop().catch(() => undefined);
    await runtime.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(`port ${config.port} is in use; set PORT to a free port`);
    return exitOnConfigError(error);
  }
  // Only once the gateway listens, so a start that fails does not use up a first token nobody can read.
  const { generated } = await app.get(AdminTokenService).initialise(config.adminToken);
  if (generated) {
    // Printed once, on the first start; only its hash is stored (the command makes a new one).
    say(`\nAdmin token (shown once; ADMIN=$(${adminTokenCommand(config.sandbox)}) makes a new one): ${generated}\n`);
  }
  logger.info({ port: config.port, embedded: runtime.embedded, sandbox: config.sandbox }, 'gateway listening');
  say(`Console: http://localhost:${config.port}/manager (sign in with the admin token; lost it? ${adminTokenCommand(config.sandbox)})`);
  if (simulator) say(`Sandbox simulator control API: ${simulator.controlUrl} (its phones are also in the console)`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // The requests in flight have up to RPC_TIMEOUT_MS (a send waiting for its worker) after the delay.
    setTimeout(() => process.exit(1), config.drainDelayMs + 15_000).unref();
    await drainHttpApp(app, config.drainDelayMs).catch((error: unknown) => logger.error({ err: error }, 'draining the HTTP server failed'));
    await simulator?.stop().catch(() => undefined);
    await runtime.close();
    // The spans batched last go out before the process ends.
    await stopTracing();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/** A ConfigError ends the start as loadConfigOrExit does: one line naming the variable, exit code 78. */
function exitOnConfigError(error: unknown): never {
  if (!(error instanceof ConfigError)) throw error;
  return loadConfigOrExit(() => {
    throw error;
  });
}

const command = process.argv[2] === 'admin-token' ? rotateAdminToken : process.argv[2] === 'migrate' ? migrate : main;
command().catch((error: unknown) => {
  process.stderr.write(
    `${JSON.stringify({ level: 'fatal', msg: command === main ? 'gateway failed to start' : `${process.argv[2]} failed`, err: String((error as Error)?.stack ?? error) })}\n`,
  );
  process.exit(1);
});
