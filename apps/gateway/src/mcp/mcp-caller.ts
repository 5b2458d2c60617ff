import type { InstanceRepository } from '@gw/persistence';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AdminTokenService } from '../admin/admin-token.service';
import { ApiError } from '../common/api-error';
import type { RateLimitService } from '../common/rate-limit.service';
import type { McpAudience } from './mcp-tools';

/** Who an /mcp request acts for: one instance (its token) or the operator (the admin token). */
export interface McpCaller {
  audience: McpAudience;
  /** The token the caller sent: its tool calls carry it to the routes, whose guards check it again. */
  token: string;
  /** The instance's id (instance callers). */
  instanceId?: string;
}

/** Instance tokens are UUID-shaped: anything longer cannot match and is not worth a query (as InstanceGuard). */
const MAX_TOKEN_LENGTH = 100;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `Authorization: Bearer <token>`, the form MCP hosts send a configured secret in. */
function bearerOf(request: FastifyRequest): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header(request, 'authorization') ?? '');
  return match?.[1];
}

/**
 * The /mcp request's credentials, checked as the routes' guards check them: the `admintoken` header
 * (the operator), the `token` header (one instance), or `Authorization: Bearer` with either token.
 * A missing or wrong token spends from the caller's address's limit, as on every route. `charge`:
 * the request spends one from its token's limit; an /mcp request that calls tools is not charged
 * here, each call being charged by the route it calls, so a tool call costs what the route costs.
 */
export class McpAuthenticator {
  constructor(
    private readonly adminTokens: AdminTokenService,
    private readonly instances: InstanceRepository,
    private readonly rateLimits: RateLimitService,
  ) {}

  async authenticate(request: FastifyRequest, reply: FastifyReply, options: { charge: boolean }): Promise<McpCaller> {
    const adminToken = header(request, 'admintoken');
    if (adminToken !== undefined) {
      if (!(await this.adminTokens.verify(adminToken))) this.refuse(request, reply, new ApiError('invalid_admin_token'));
      if (options.charge) this.rateLimits.chargeAdmin(reply);
      return { audience: 'admin', token: adminToken };
    }
    const bearer = bearerOf(request);
    const token = header(request, 'token') ?? bearer;
    if (!token || token.length > MAX_TOKEN_LENGTH) {
      // An admin token of any length is the operator's, whatever the length of instance tokens.
      if (token && token === bearer && (await this.adminTokens.verify(token))) return this.admin(token, reply, options);
      this.refuse(request, reply, ApiError.invalidToken());
    }
    // Before the lookup, as InstanceGuard: a token over its limit is refused without a query.
    const charged = options.charge && this.rateLimits.beforeInstanceLookup(token, request, reply);
    const instance = await this.instances.findByToken(token);
    if (!instance) {
      if (token === bearer && (await this.adminTokens.verify(token))) return this.admin(token, reply, options);
      this.refuse(request, reply, ApiError.invalidToken());
    }
    if (options.charge && !charged) this.rateLimits.chargeInstance(token, reply);
    return { audience: 'instance', token, instanceId: instance.id };
  }

  private admin(token: string, reply: FastifyReply, options: { charge: boolean }): McpCaller {
    if (options.charge) this.rateLimits.chargeAdmin(reply);
    return { audience: 'admin', token };
  }

  /** A wrong or missing token: the address spends (a 429 once it is out), then `error`. */
  private refuse(request: FastifyRequest, reply: FastifyReply, error: ApiError): never {
    this.rateLimits.chargeUnauthenticated(request, reply);
    throw error;
  }
}
