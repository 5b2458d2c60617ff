import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metrics } from './metrics';
import { buildInfo } from './version';

export type ReadinessCheck = () => Promise<void>;

export interface HealthReport {
  status: 'ok' | 'unavailable';
  checks: Record<string, 'ok' | string>;
}

/** Runs every readiness check with a deadline; a failing check names itself in the report. */
export async function checkReadiness(checks: Record<string, ReadinessCheck>, timeoutMs = 2000): Promise<HealthReport> {
  const results: Record<string, string> = {};
  await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          check(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
          }),
        ]);
        results[name] = 'ok';
      } catch (error) {
        results[name] = `failed: ${(error as Error).message}`;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const ok = Object.values(results).every((value) => value === 'ok');
  return { status: ok ? 'ok' : 'unavailable', checks: results };
}

/** Liveness: the process answers, and which build it runs. */
export function livenessReport(): { status: 'ok'; version: string; commit: string } {
  const { version, commit } = buildInfo();
  return { status: 'ok', version, commit };
}

/**
 * The small HTTP port of services that have no API of their own: `GET /health` (liveness: the process
 * answers, with its version), `GET /ready` (Postgres and NATS reachable) and `GET /metrics` (the
 * process's Prometheus registry).
 */
export async function startHealthServer(port: number, checks: Record<string, ReadinessCheck>, host = '0.0.0.0'): Promise<{ server: Server; port: number }> {
  const server = createServer((request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'GET') return send(405, { error: 'Method not allowed' });
    if (request.url === '/health') return send(200, livenessReport());
    if (request.url === '/metrics') {
      void metrics()
        .exposition()
        .then(
          ({ contentType, body }) => {
            response.writeHead(200, { 'content-type': contentType });
            response.end(body);
          },
          () => send(500, { error: 'metrics unavailable' }),
        );
      return;
    }
    if (request.url === '/ready') {
      void checkReadiness(checks).then((report) => send(report.status === 'ok' ? 200 : 503, report));
      return;
    }
    send(404, { error: 'Not found' });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return { server, port: (server.address() as AddressInfo).port };
}
