import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import { RpcError } from '@gw/contracts';
import { databaseUnavailable } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGGER } from '../runtime/tokens';
import { API_ERRORS, ApiError, type ApiErrorKind, rpcErrorKind, rpcErrorMessage } from './api-error';

/**
 * Every error leaves as `{error: string}` (plus the catalogue's `code` and the thrower's extra fields):
 * whatever is thrown is first turned into one kind of the catalogue (`api-error.ts`). Internals are
 * logged with the request id, never returned.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const error = this.shape(toApiError(exception, request), request);
    if (error.status >= 500 && error.kind !== 'whatsapp_refused')
      this.logger.error({ err: exception, requestId: request.id, url: request.url }, 'request failed');
    const retryAfter = (API_ERRORS[error.kind] as { retryAfterSeconds?: number }).retryAfterSeconds;
    if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
    void reply.status(error.status).header('content-type', 'application/json; charset=utf-8').send(error.body());
  }

  /** The error as the route answers it: the same here; a route with its own error bodies (quick replies) overrides this. */
  protected shape(error: ApiError, _request: FastifyRequest): ApiError {
    return error;
  }
}

/** Anything thrown at the HTTP edge, as one kind of the catalogue. */
export function toApiError(exception: unknown, request: Pick<FastifyRequest, 'method' | 'url'>): ApiError {
  if (exception instanceof ApiError) return exception;
  if (exception instanceof RpcError) return new ApiError(rpcErrorKind(exception.code), rpcErrorMessage(exception.code, exception.message));
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status === 404) return new ApiError('not_found', `Route ${request.method} ${request.url.split('?')[0]} not found`);
    const response = exception.getResponse();
    const message = typeof response === 'string' ? response : ((response as { message?: unknown }).message ?? exception.message);
    return new ApiError(kindOfStatus(status), Array.isArray(message) ? message.join('; ') : String(message));
  }
  const fastifyError = exception as { statusCode?: number; code?: string; message?: string };
  if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError('unsupported_media_type');
    if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError('payload_too_large');
    if (fastifyError.code?.startsWith('FST_ERR_CTP') || exception instanceof SyntaxError) return ApiError.badRequest('Malformed JSON body');
    return new ApiError(kindOfStatus(fastifyError.statusCode), fastifyError.message ?? 'Bad request');
  }
  if (exception instanceof SyntaxError) return ApiError.badRequest('Malformed JSON body');
  if (databaseUnavailable(exception)) return new ApiError('unavailable', 'Database unavailable, try again');
  return new ApiError('internal');
}

/**
 * Postgres gone or changing hands (a failover: the primary killed, HAProxy cutting its sessions, the
 * standby not yet promoted or still read-only): a 503 the client retries, with Retry-After, not a 500.
 * One judgement for the whole codebase: the session worker waits out the same errors (issue #39).
 */
export { databaseUnavailable };

/** A status raised by the framework (Nest or Fastify) as the catalogue's kind for it. */
function kindOfStatus(status: number): ApiErrorKind {
  const kind = (Object.keys(API_ERRORS) as ApiErrorKind[]).find((candidate) => API_ERRORS[candidate].status === status);
  if (kind) return kind;
  return status >= 500 ? 'internal' : 'invalid_request';
}
