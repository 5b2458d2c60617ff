import { type CanActivate, type ExecutionContext, Inject, Injectable, createParamDecorator } from '@nestjs/common';
import { InstanceRepository } from '@gw/persistence';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { asyncAcceptTokens, isSend } from './accept-token-cache';
import { ADMIN_TOKEN_CHECK, type AdminTokenCheck } from './admin-token-check';
import { isMcpUrl } from './mcp-path';
import { API_ERRORS, ApiError } from './api-error';
import { RATE_LIMITED_BODY, RateLimitService } from './rate-limit.service';
import { type RequestInstance, toRequestInstance } from './request-instance';

type AuthedRequest = FastifyRequest & { instance?: RequestInstance };

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `admintoken` header (or `?admintoken=` when the header is absent): the operator. An instance token never opens these routes. Each answer spends from the admin's rate limit. */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(
    @Inject(ADMIN_TOKEN_CHECK) private readonly adminTokens: AdminTokenCheck,
    private readonly rateLimits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (!(await this.adminTokens.verify(header(request, 'admintoken') ?? fromQuery(request, 'admintoken')))) {
      this.rateLimits.chargeUnauthenticated(request, reply);
      throw new ApiError('invalid_admin_token');
    }
    this.rateLimits.chargeAdmin(reply);
    return true;
  }
}

/** `token` header (or `?token=` when the header is absent): one instance. The admin token never opens these routes. Each answer spends from the token's rate limit. */
@Injectable()
export class InstanceGuard implements CanActivate {
  constructor(
    private readonly instances: InstanceRepository,
    private readonly rateLimits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<AuthedRequest>();
    const reply = http.getResponse<FastifyReply>();
    const token = header(request, 'token') ?? fromQuery(request, 'token');
    // Tokens are UUID-shaped; anything else cannot match and is not worth a query.
    if (!token || token.length > 100) {
      this.rateLimits.chargeUnauthenticated(request, reply);
      throw ApiError.invalidToken();
    }
    // Before the lookup, so a token over its limit costs no query.
    const charged = this.rateLimits.beforeInstanceLookup(token, request, reply);
    // Sends may use an instance looked up in the last seconds (see AcceptTokenCache); the rest read it fresh.
    const cacheable = isSend(request.method, request.url);
    let instance = cacheable ? asyncAcceptTokens.get(token) : undefined;
    if (!instance) {
      const found = await this.instances.findByToken(token);
      instance = found ? toRequestInstance(found) : undefined;
      // Kept from this lookup on (a hit does not extend it): at most ten seconds old.
      if (instance && cacheable) asyncAcceptTokens.set(token, instance);
    }
    if (!instance) {
      this.rateLimits.chargeUnauthenticated(request, reply);
      throw ApiError.invalidToken();
    }
    if (!charged) this.rateLimits.chargeInstance(token, reply);
    request.instance = instance;
    return true;
  }
}

/**
 * The per-token limit before the body is read (a Fastify `onRequest` hook; the guards run after the
 * body is parsed): a tenant over its limit is answered 429 at once, without its body being parsed.
 */
export function instanceLimitBeforeBody(rateLimits: RateLimitService): onRequestHookHandler {
  return (request, reply, done) => {
    // /mcp charges its own requests: a tool call is charged once, by the route it calls (mcp/mcp.routes.ts).
    if (isMcpUrl(request.url)) return done();
    if (!rateLimits.refusedBeforeBody(header(request, 'token') ?? fromQuery(request, 'token'), request, reply)) return done();
    void reply.status(API_ERRORS.rate_limited.status).header('content-type', 'application/json; charset=utf-8').send(RATE_LIMITED_BODY);
  };
}

/**
 * A token sent as a query parameter, read only when its header is absent (the header wins): browsers'
 * EventSource sends no headers, and published uazapi clients (an MCP server) send `?token=` / `?admintoken=`
 * on every route. The logger masks both in URLs; metrics label routes by pattern, never by URL.
 */
function fromQuery(request: FastifyRequest, name: 'token' | 'admintoken'): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
}

/** The instance the `token` header authenticated. */
export const CurrentInstance = createParamDecorator((_: unknown, context: ExecutionContext): RequestInstance => {
  const instance = context.switchToHttp().getRequest<AuthedRequest>().instance;
  if (!instance) throw ApiError.invalidToken();
  return instance;
});
