import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandboxSimulator } from '../src/runtime/sandbox-simulator';

async function squat(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, port: (server.address() as { port: number }).port };
}

async function freePort(): Promise<number> {
  const { server, port } = await squat();
  await new Promise((done) => server.close(done));
  return port;
}

describe('startSandboxSimulator', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-sandbox-sim-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it.each([
    ['SIM_WS_PORT', 'wsPort'],
    ['SIM_CONTROL_PORT', 'controlPort'],
  ] as const)('should name %s when its port is in use, and leave no port open', async (variable, which) => {
    const busy = await squat();
    const ports = { wsPort: await freePort(), controlPort: await freePort(), [which]: busy.port };
    try {
      await expect(startSandboxSimulator(ports, dataDir)).rejects.toThrow(
        `Invalid environment variable ${variable}: port ${busy.port} of the sandbox's simulator is in use; set ${variable} to a free port`,
      );
    } finally {
      await new Promise((done) => busy.server.close(done));
    }
    // Nothing left listening: the other port is free again.
    const other = which === 'wsPort' ? ports.controlPort : ports.wsPort;
    const probe = createServer();
    await new Promise<void>((done, fail) => probe.once('error', fail).listen(other, '127.0.0.1', done));
    await new Promise((done) => probe.close(done));
  });
});
