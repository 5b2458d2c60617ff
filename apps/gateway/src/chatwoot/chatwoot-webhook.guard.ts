import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { ChatwootRepository } from '@gw/persistence';
import { secretsEqual } from '@gw/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../common/api-error';
import { RateLimitService } from '../common/rate-limit.service';

/**
 * `POST /chatwoot/webhook/{instance}/{secret}`: the unguessable URL `PUT /chatwoot/config` answered is
 * the credential (Chatwoot's inbox webhooks carry no token). The secret is compared in constant time;
 * any other URL is a 404 that says nothing about the instance, and spends from the caller's address
 * limit for bad credentials (429 once it is out), as a wrong token does. A right URL is not limited:
 * Chatwoot posts a webhook for every message, the bridge's own copies included.
 */
/** Stands in for the secret of an instance without a bridge (never matches: real secrets start with `cw_`). */
const UNKNOWN_SECRET = 'none:0000000000000000000000000000000000000000';

@Injectable()
export class ChatwootWebhookGuard implements CanActivate {
  constructor(
    private readonly chatwoot: ChatwootRepository,
    private readonly rateLimits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const { instance, secret } = (request.params ?? {}) as { instance?: string; secret?: string };
    const shaped = typeof instance === 'string' && typeof secret === 'string' && instance.length <= 100 && secret.length <= 200;
    const config = shaped ? await this.chatwoot.findConfig(instance) : null;
    // Compared whether the instance exists or not: the time taken does not tell which instances have a bridge.
    const valid = secretsEqual(shaped ? secret : '', config?.webhookSecret ?? UNKNOWN_SECRET) && config !== null;
    if (!valid) {
      this.rateLimits.chargeUnauthenticated(request, reply);
      throw ApiError.notFound('Not found');
    }
    return true;
  }
}
