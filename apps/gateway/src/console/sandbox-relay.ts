import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { InstanceRepository } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminTokenService } from '../admin/admin-token.service';
import { ApiError } from '../common/api-error';
import { type RequestInstance, toRequestInstance } from '../common/request-instance';

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
/** Phones created through the relay with an instance token, remembered (in memory) at most. */
const MAX_CREATED = 10_000;

type Route = (typeof RELAYED)[number];
type Body = Record<string, unknown>;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The phone an instance is linked to: its owner's number, once paired. */
const linkedPhone = (instance: RequestInstance): string | undefined => (instance.owner && PHONE.test(instance.owner) ? instance.owner : undefined);

/**
 * `npm run sandbox` only: /sandbox/sim/* relays a few of the embedded simulator's control routes (its
 * phones: list and create them, scan a QR code or enter a pairing code, send a message as one, read its
 * inbox), so the console can play the phones from the browser, same origin, without curl. Outside the
 * sandbox these routes do not exist.
 *
 * The admin token opens every one of them. An instance token reaches only its own phone: the one it is
 * linked to (its owner's number) and, before pairing, a phone it created here itself or one that does
 * not exist yet. It lists only those, creates only phones that do not exist yet, links one only with its
 * own instance's current QR code or pairing code, and reads or sends as its linked phone only (to
 * anyone). Another tenant's phone, its inbox or its contacts are out of reach (403).
 */
export function serveSandboxRelay(app: NestFastifyApplication, options: { controlUrl: string; logger: Logger }): void {
  const fastify = app.getHttpAdapter().getInstance();
  const adminTokens = app.get(AdminTokenService);
  const instances = app.get(InstanceRepository);
  const base = options.controlUrl.replace(/\/$/, '');
  /** phone → the id of the instance that created it through the relay (lost on restart: the admin can still link it). */
  const createdBy = new Map<string, string>();

  /** `admin`, the instance the token names (read fresh: its owner, QR and pairing code now), or undefined. */
  const caller = async (request: FastifyRequest): Promise<'admin' | RequestInstance | undefined> => {
    const admin = header(request, 'admintoken');
    if (admin && (await adminTokens.verify(admin))) return 'admin';
    const token = header(request, 'token');
    const found = token && token.length <= 100 ? await instances.findByToken(token) : null;
    return found ? toRequestInstance(found) : undefined;
  };

  const exists = async (phone: string): Promise<boolean> => {
    const answer = await fetch(`${base}/sim/accounts/${phone}`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    await answer.body?.cancel();
    return answer.ok;
  };

  /** Whether the instance may link (or create) this phone: its own, one it created here, or none yet. */
  const mayLink = async (instance: RequestInstance, phone: string): Promise<boolean> =>
    phone === linkedPhone(instance) || createdBy.get(phone) === instance.id || !(await exists(phone));

  /** What an instance token may not do on this route, as the error to answer; undefined: it may. */
  const refusal = async (route: Route, instance: RequestInstance, phone: string | undefined, body: Body): Promise<ApiError | undefined> => {
    const forbidden = (message: string) => new ApiError('forbidden', message);
    if (route.path === '/sim/accounts') {
      if (route.method === 'GET') return undefined; // filtered below
      const created = String(body.phone ?? '').replace(/\D/g, '');
      if (created && (await exists(created))) return ApiError.conflict('This phone already exists; only the admin token acts on phones it did not create');
      return undefined;
    }
    if (phone !== undefined) return phone === linkedPhone(instance) ? undefined : forbidden('An instance token reaches only the phone linked to its instance');
    // /sim/scan and /sim/pair-code: a phone of its own, with its own instance's code.
    if (typeof body.phone !== 'string' || !PHONE.test(body.phone)) return ApiError.badRequest('phone must be 5 to 20 digits');
    if (!(await mayLink(instance, body.phone))) return forbidden('An instance token links only a phone it created or its own');
    const [field, current] = route.path === '/sim/scan' ? (['qr', instance.qrcode] as const) : (['code', instance.paircode] as const);
    if (!current || body[field] !== current)
      return forbidden(`An instance token links only with its own instance's current ${route.path === '/sim/scan' ? 'QR code' : 'pairing code'}`);
    return undefined;
  };

  /** What an instance token sees of the phones: its linked phone and those it created here. */
  const visible = (instance: RequestInstance, text: string): string => {
    const phones = JSON.parse(text) as Array<{ phone?: string }>;
    if (!Array.isArray(phones)) return text;
    return JSON.stringify(phones.filter(({ phone }) => phone !== undefined && (phone === linkedPhone(instance) || createdBy.get(phone) === instance.id)));
  };

  const remember = (phone: string, instance: RequestInstance) => {
    if (createdBy.size >= MAX_CREATED) createdBy.delete(createdBy.keys().next().value as string);
    createdBy.set(phone, instance.id);
  };

  for (const route of RELAYED) {
    fastify.route({
      method: route.method,
      url: `${SANDBOX_PREFIX}${route.path}`,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const answerError = (error: ApiError) => reply.status(error.status).send(error.body());
        const who = await caller(request);
        if (!who) return answerError(ApiError.invalidToken());
        const phone = (request.params as { phone?: string }).phone;
        if (phone !== undefined && !PHONE.test(phone)) return answerError(ApiError.badRequest('phone must be 5 to 20 digits'));
        if (route.method === 'POST' && (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body))) {
          return answerError(ApiError.badRequest('The body must be a JSON object'));
        }
        const body = (request.body ?? {}) as Body;
        const path = route.path.replace(':phone', phone ?? '');
        // The inbox is read often: never a long poll through the relay.
        const query = route.path.endsWith('/inbox') ? `?waitMs=0&since=${Number((request.query as { since?: string }).since) || 0}` : '';
        try {
          const refused = who === 'admin' ? undefined : await refusal(route, who, phone, body);
          if (refused) return answerError(refused);
          const answer = await fetch(`${base}${path}${query}`, {
            method: route.method,
            headers: route.method === 'POST' ? { 'content-type': 'application/json' } : {},
            body: route.method === 'POST' ? JSON.stringify(body) : undefined,
            signal: AbortSignal.timeout(TIMEOUT_MS),
          });
          let text = await answer.text();
          if (who !== 'admin' && answer.ok && route.path === '/sim/accounts') {
            if (route.method === 'GET') text = visible(who, text);
            else remember(String((JSON.parse(text) as { phone?: unknown }).phone), who);
          }
          return reply
            .status(answer.status)
            .header('content-type', answer.headers.get('content-type') ?? 'application/json')
            .header('cache-control', 'no-store')
            .send(text);
        } catch (error) {
          options.logger.warn({ err: error, path }, 'sandbox relay: the simulator did not answer');
          return answerError(new ApiError('upstream_failed', 'The simulator did not answer'));
        }
      },
    });
  }
}
