import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../runtime/gateway-config';
import { GATEWAY_CONFIG } from '../runtime/tokens';
import { ApiError } from './api-error';
import { TokenBucketLimiter } from './rate-limit';

/** The one admin bucket's key: there is one admin token at a time, and a rotation keeps its budget. */
const ADMIN_KEY = 'admin';

/**
 * Per-token request limits, applied by the guards where the token is resolved: one bucket per instance
 * token, one for the admin token, and one per client IP for requests whose token is missing or wrong (a
 * flood of 401s is answered 429). A tenant's runaway client empties its own bucket only. In memory:
 * the limits are per gateway replica. The IP is the socket's peer: behind a proxy every client shares
 * the proxy's bucket for bad tokens (a valid token never spends from it, nor is refused by it).
 */
@Injectable()
export class RateLimitService {
  private readonly instance?: TokenBucketLimiter;
  private readonly admin?: TokenBucketLimiter;
  private readonly unauthenticated?: TokenBucketLimiter;
  /** Requests `chargeBeforeBody` charged already: the guard does not charge them again. */
  private readonly chargedBeforeBody = new WeakSet<FastifyRequest>();

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    const { instance, admin, unauthenticated } = config.rateLimits;
    if (instance) this.instance = new TokenBucketLimiter(instance);
    if (admin) this.admin = new TokenBucketLimiter(admin);
    if (unauthenticated) this.unauthenticated = new TokenBucketLimiter(unauthenticated);
  }

  /**
   * Before the lookup: a token charged before (so valid then) spends now, and one over its limit is
   * refused without a query. A token without a bucket is always looked up, whatever its address's
   * failures: behind a shared proxy, others' bad tokens must not keep a new or idle tenant out (only a
   * failed lookup spends from the address's bucket, in `chargeUnauthenticated`).
   * Returns whether the token was charged (then `chargeInstance` must not charge it again).
   */
  beforeInstanceLookup(token: string, request: FastifyRequest, reply: FastifyReply): boolean {
    if (this.chargedBeforeBody.has(request)) return true;
    if (this.instance?.has(token)) {
      spend(this.instance, token, reply);
      return true;
    }
    return false;
  }

  /**
   * `onRequest`, before the body is read or parsed: a request carrying an instance token that holds a
   * bucket (found valid by a lookup before) spends from it now, whatever the route, and one over its
   * limit is refused here, so a tenant's flood costs the others no parsing of its bodies. A token
   * without a bucket waits for the guard's lookup. Returns whether it is refused (its RateLimit and
   * Retry-After headers set; the caller answers `RATE_LIMITED_BODY`).
   */
  refusedBeforeBody(token: string | undefined, request: FastifyRequest, reply: FastifyReply): boolean {
    if (!this.instance || !token || !this.instance.has(token)) return false;
    this.chargedBeforeBody.add(request);
    return retryAfterWhenOver(take(this.instance, token, reply), reply);
  }

  /** A token the lookup found, first seen since its bucket was forgotten. */
  chargeInstance(token: string, reply: FastifyReply): void {
    if (this.instance) spend(this.instance, token, reply);
  }

  /** A verified admin token. */
  chargeAdmin(reply: FastifyReply): void {
    if (this.admin) spend(this.admin, ADMIN_KEY, reply);
  }

  /** A missing or wrong token: the caller's address spends (429 instead of the 401/403 once it is out). */
  chargeUnauthenticated(request: FastifyRequest, reply: FastifyReply): void {
    if (this.unauthenticated) refuseWhenOver(this.unauthenticated.take(request.ip), reply);
  }
}

function spend(limiter: TokenBucketLimiter, key: string, reply: FastifyReply): void {
  refuseWhenOver(take(limiter, key, reply), reply);
}

/** Spends one of `key`'s tokens, with the RateLimit headers: the wait before the next one (0: allowed). */
function take(limiter: TokenBucketLimiter, key: string, reply: FastifyReply): number {
  const waitMs = limiter.take(key);
  void reply.header('ratelimit-limit', limiter.limit.burst).header('ratelimit-remaining', limiter.remaining);
  return waitMs;
}

function refuseWhenOver(waitMs: number, reply: FastifyReply): void {
  if (retryAfterWhenOver(waitMs, reply)) throw new ApiError('rate_limited');
}

/** Whether `waitMs` refuses the request; if so, with its Retry-After header. */
function retryAfterWhenOver(waitMs: number, reply: FastifyReply): boolean {
  if (waitMs <= 0) return false;
  // Whole seconds (RFC 9110), at least one: a client retrying at once would only spend again.
  void reply.header('retry-after', Math.max(1, Math.ceil(waitMs / 1000)));
  return true;
}

/**
 * The 429 body of a refusal before the body, serialized once: a flood of them builds no Error (its
 * stack trace) and runs no serializer, per request.
 */
export const RATE_LIMITED_BODY = JSON.stringify(new ApiError('rate_limited').body());
