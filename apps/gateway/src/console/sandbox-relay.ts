import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { InstanceRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminTokenService } from '../admin/admin-token.service';

/** The simulator's control routes the console may use, and nothing else (no faults, no restarts, no device logouts). */
const RELAYED: Array<{ method: 'GET' | 'POST'; path: string }> = [
  { method: 'GET', path: '/sim/accounts' },
  { method: 'POST', path: '/sim/accounts' },
  { method: 'POST', path: '/sim/scan' },
  { method: 'POST', path: '/sim/pair-code' },
  { method: 'POST', path: '/sim/accounts/:phone/send' },
  { method: 'GET', path: '/sim/accounts/:phone/inbox' },
];

export const SANDBOX_PREFIX = '/sandbox';
const PHONE = /^\d{5,20}$/;
const TIMEOUT_MS = 30_000;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * `npm run sandbox` only: /sandbox/sim/* relays a few of the embedded simulator's control routes (its
 * phones: list and create them, scan a QR code or enter a pairing code, send a message as one, read its
 * inbox), so the console can play the phones from the browser, same origin, without curl. Any valid token
 * opens them (the admin's or an instance's): they act on simulated phones only. Outside the sandbox these
 * routes do not exist.
 */
export function serveSandboxRelay(app: NestFastifyApplication, options: { controlUrl: string; logger: Logger }): void {
  const fastify = app.getHttpAdapter().getInstance();
  const adminTokens = app.get(AdminTokenService);
  const instances = app.get(InstanceRepository);
  const base = options.controlUrl.replace(/\/$/, '');

  const authorised = async (request: FastifyRequest): Promise<boolean> => {
    const admin = header(request, 'admintoken');
    if (admin && (await adminTokens.verify(admin))) return true;
    const token = header(request, 'token');
    return Boolean(token && token.length <= 100 && (await instances.findByToken(token)));
  };

  for (const route of RELAYED) {
    fastify.route({
      method: route.method,
      url: `${SANDBOX_PREFIX}${route.path}`,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        if (!(await authorised(request))) return reply.status(401).send({ error: 'Invalid token' });
        const phone = (request.params as { phone?: string }).phone;
        if (phone !== undefined && !PHONE.test(phone)) return reply.status(400).send({ error: 'phone must be 5 to 20 digits' });
        if (route.method === 'POST' && (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body))) {
          return reply.status(400).send({ error: 'The body must be a JSON object' });
        }
        const path = route.path.replace(':phone', phone ?? '');
        // The inbox is read often: never a long poll through the relay.
        const query = route.path.endsWith('/inbox') ? `?waitMs=0&since=${Number((request.query as { since?: string }).since) || 0}` : '';
        try {
          const answer = await fetch(`${base}${path}${query}`, {
            method: route.method,
            headers: route.method === 'POST' ? { 'content-type': 'application/json' } : {},
            body: route.method === 'POST' ? JSON.stringify(request.body) : undefined,
            signal: AbortSignal.timeout(TIMEOUT_MS),
          });
          const text = await answer.text();
          return reply
            .status(answer.status)
            .header('content-type', answer.headers.get('content-type') ?? 'application/json')
            .header('cache-control', 'no-store')
            .send(text);
        } catch (error) {
          options.logger.warn({ err: error, path }, 'sandbox relay: the simulator did not answer');
          return reply.status(502).send({ error: 'The simulator did not answer' });
        }
      },
    });
  }
}
