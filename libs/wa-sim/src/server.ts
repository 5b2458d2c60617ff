// Runnable entry: starts the simulator and prints its health info as one JSON line.
//   SIM_WS_PORT (8480), SIM_CONTROL_PORT (8481), SIM_HOST (127.0.0.1), SIM_ROOT_KEY_SEED or
//   SIM_ROOT_KEY_FILE (stable root key), SIM_LOG_LEVEL (silent), SIM_AUTO_ACCOUNTS=1,
//   SIM_ADDRESSING=lid|pn, SIM_MEDIA_PORT (0 = any), SIM_LOAD_MODE=1 (phones don't decrypt;
//   fresh devices skip the prekey upload), SIM_STATE_DIR (keep accounts, devices and keys across
//   restarts).
import { startSimulator } from './index';
import { quietLibsignalConsole } from './quiet-libsignal';

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new Error(`${name} must be a port number, got "${raw}"`);
  }
  return value;
}

async function main(): Promise<void> {
  quietLibsignalConsole();
  const loadMode = process.env.SIM_LOAD_MODE === '1';
  const running = await startSimulator({
    wsPort: envNumber('SIM_WS_PORT', 8480),
    controlPort: envNumber('SIM_CONTROL_PORT', 8481),
    host: process.env.SIM_HOST || '127.0.0.1',
    rootKeySeed: process.env.SIM_ROOT_KEY_SEED || undefined,
    rootKeyFile: process.env.SIM_ROOT_KEY_FILE || undefined,
    logLevel: process.env.SIM_LOG_LEVEL || 'silent',
    autoCreateAccounts: process.env.SIM_AUTO_ACCOUNTS === '1',
    incomingAddressing: process.env.SIM_ADDRESSING === 'pn' ? 'pn' : 'lid',
    phoneDecrypt: !loadMode,
    initialPrekeyCount: loadMode ? 50 : 0,
    mediaPort: envNumber('SIM_MEDIA_PORT', 0),
    stateDir: process.env.SIM_STATE_DIR || undefined,
  });
  process.stdout.write(
    `${JSON.stringify({ ok: true, websocketUrl: running.websocketUrl, controlUrl: running.controlUrl, rootPublicKey: running.rootPublicKey, mediaHost: running.mediaHost })}\n`,
  );
  const shutdown = (): void => {
    void running.stop().finally(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  process.stderr.write(`${JSON.stringify({ ok: false, error: (err as Error).message })}\n`);
  process.exit(1);
});
