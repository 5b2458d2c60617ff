import { join } from 'node:path';
import { ConfigError, type EnvReader } from '@gw/platform';
import type { RunningSimulator } from '@gw/wa-sim';

export interface SandboxPorts {
  wsPort: number;
  controlPort: number;
}

/** SIM_WS_PORT and SIM_CONTROL_PORT, read at boot with the rest of the configuration. */
export function readSandboxPorts(env: EnvReader): SandboxPorts {
  return { wsPort: env.port('SIM_WS_PORT', 8480), controlPort: env.port('SIM_CONTROL_PORT', 8481) };
}

/**
 * `npm run sandbox`'s WhatsApp simulator, in this process. A port in use is a ConfigError naming its
 * variable (it used to be a raw "Unhandled 'error' event").
 */
export async function startSandboxSimulator(ports: SandboxPorts, dataDir: string): Promise<RunningSimulator> {
  // Loaded here, not at the gateway's start: only the sandbox runs it (it brings Baileys' protocol code with it).
  const { startSimulator } = await import('@gw/wa-sim');
  try {
    return await startSimulator({
      wsPort: ports.wsPort,
      controlPort: ports.controlPort,
      autoCreateAccounts: true,
      // Its phones, linked devices and certificate root survive restarts, so sandbox pairings do too.
      stateDir: join(dataDir, 'simulator'),
    });
  } catch (error) {
    const { code, port } = error as NodeJS.ErrnoException & { port?: number };
    if (code !== 'EADDRINUSE') throw error;
    const variable = port === ports.controlPort ? 'SIM_CONTROL_PORT' : 'SIM_WS_PORT';
    throw new ConfigError(variable, `port ${port ?? ports.wsPort} of the sandbox's simulator is in use; set ${variable} to a free port`);
  }
}
