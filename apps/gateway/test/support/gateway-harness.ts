import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type Bus, InProcessBus } from '@gw/bus';
import { createLogger, EnvReader, type Logger } from '@gw/platform';
import { openTestDatabase, type TestDatabase } from '@gw/testing';
import { AdminTokenService } from '../../src/admin/admin-token.service';
import { loadGatewayConfig, type GatewayConfig } from '../../src/runtime/gateway-config';
import { createHttpApp } from '../../src/http-app';
import { CONTRACT_REQUEST_HEADER, ResponseContract, type ContractViolation } from './response-contract';

export interface GatewayHarness {
  baseUrl: string;
  adminToken: string;
  db: TestDatabase;
  bus: Bus;
  config: GatewayConfig;
  app: NestFastifyApplication;
  /** Every answer to an operation of /openapi.json, checked against the document (see ResponseContract). */
  contract: ResponseContract;
  call(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string; admin?: string; raw?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any }>;
  createInstance(name?: string): Promise<{ id: string; token: string }>;
  close(): Promise<void>;
}

/** A gateway over HTTP on a random port, with its own schema and bus (workers are the test's to add). */
export async function startGateway(
  /** `simulatorControlUrl`: serve the sandbox's phones relay (/sandbox/sim/*) in front of this simulator. */
  options: { bus?: Bus; db?: TestDatabase; env?: Record<string, string>; logger?: Logger; simulatorControlUrl?: string } = {},
): Promise<GatewayHarness> {
  const db = options.db ?? (await openTestDatabase());
  const bus = options.bus ?? new InProcessBus();
  const config = loadGatewayConfig(new EnvReader({ DATABASE_URL: db.url, PORT: '0', RPC_TIMEOUT_MS: '5000', CONNECT_TIMEOUT_MS: '20000', ...options.env }), []);
  const logger = options.logger ?? createLogger('gateway-test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const app = await createHttpApp({ config, dataSource: db.dataSource, bus, logger }, { simulatorControlUrl: options.simulatorControlUrl });
  const adminToken = 'test-admin-token-0123456789';
  await app.get(AdminTokenService).initialise(adminToken);
  const contract = new ResponseContract(app);
  contract.install();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${address.port}`;

  let calls = 0;
  const call: GatewayHarness['call'] = async (method, path, opts = {}) => {
    const check = `call-${++calls}`;
    const headers: Record<string, string> = { [CONTRACT_REQUEST_HEADER]: check, ...(opts.headers ?? {}) };
    if (opts.token !== undefined) headers.token = opts.token;
    if (opts.admin !== undefined) headers.admintoken = opts.admin;
    let payload: string | undefined = opts.raw;
    if (opts.body !== undefined) payload = JSON.stringify(opts.body);
    if (payload !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body: payload });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON; the assertion will show it
    }
    breaches(contract.take(check));
    return { status: response.status, body };
  };

  return {
    baseUrl,
    adminToken,
    db,
    bus,
    config,
    app,
    contract,
    call,
    createInstance: async (name = 'test') => {
      const { status, body } = await call('POST', '/instance/create', { admin: adminToken, body: { name } });
      if (status !== 200) throw new Error(`create failed: ${status} ${JSON.stringify(body)}`);
      return { id: body.instance.id, token: body.token };
    },
    close: async () => {
      await app.close();
      if (!options.bus) await bus.close();
      if (!options.db) await db.close();
      // What requests made without `call` (fetch, SSE, raw sockets) answered against the document.
      breaches(contract.drain());
    },
  };
}

/**
 * Answers that break the document fail the test that saw them (`CONTRACT_CHECK=report` appends them to
 * $CONTRACT_REPORT instead, to list them all in one run; `off` skips the check).
 */
function breaches(violations: ContractViolation[]): void {
  if (!violations.length) return;
  const mode = process.env.CONTRACT_CHECK ?? 'enforce';
  if (mode === 'off') return;
  if (mode === 'report') {
    const file = process.env.CONTRACT_REPORT ?? '/tmp/contract-violations.ndjson';
    process
      .getBuiltinModule('node:fs')
      .appendFileSync(file, violations.map((violation) => `${JSON.stringify({ suite: expect.getState().testPath, ...violation })}\n`).join(''));
    return;
  }
  throw new Error(`the answer does not match /openapi.json:\n${violations.map((violation) => `  ${violation.problem}`).join('\n')}`);
}
