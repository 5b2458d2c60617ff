import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import { ErrorCode, RpcError, assertUnreachable } from '@gw/contracts';
import type { Logger } from '@gw/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGGER } from '../runtime/tokens';
import { ApiError } from './api-error';

/** Every error leaves as `{error: string}`; internals are logged with the request id, never returned. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const { status, body } = this.toResponse(exception, request);
    if (status >= 500) this.logger.error({ err: exception, requestId: request.id, url: request.url }, 'request failed');
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  private toResponse(exception: unknown, request: FastifyRequest): { status: number; body: Record<string, unknown> } {
    if (exception instanceof ApiError) return { status: exception.status, body: { error: exception.message, ...exception.extra } };
    if (exception instanceof RpcError) return { status: rpcStatus(exception.code), body: { error: rpcMessage(exception) } };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) return { status, body: { error: `Route ${request.method} ${request.url.split('?')[0]} not found` } };
      const response = exception.getResponse();
      const message = typeof response === 'string' ? response : ((response as { message?: unknown }).message ?? exception.message);
      return { status, body: { error: Array.isArray(message) ? message.join('; ') : String(message) } };
    }
    const fastifyError = exception as { statusCode?: number; code?: string; message?: string };
    if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
      if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return { status: 415, body: { error: 'Content-Type must be application/json' } };
      if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { status: 413, body: { error: 'Request body too large' } };
      if (fastifyError.code?.startsWith('FST_ERR_CTP') || exception instanceof SyntaxError) return { status: 400, body: { error: 'Malformed JSON body' } };
      return { status: fastifyError.statusCode, body: { error: fastifyError.message ?? 'Bad request' } };
    }
    if (exception instanceof SyntaxError) return { status: 400, body: { error: 'Malformed JSON body' } };
    return { status: 500, body: { error: 'Internal server error' } };
  }
}

/** Maps bus error codes to HTTP status; a new code without a status fails to compile. */
export function rpcStatus(code: ErrorCode): number {
  switch (code) {
    case ErrorCode.BadRequest:
      return 400;
    case ErrorCode.NotFound:
      return 404;
    case ErrorCode.Conflict:
      return 409;
    // The instance has no live session: a state conflict the client resolves by connecting.
    case ErrorCode.NoSession:
    case ErrorCode.NotConnected:
      return 409;
    case ErrorCode.Timeout:
      return 504;
    case ErrorCode.CapacityExhausted:
      return 503;
    case ErrorCode.Fenced:
      return 503;
    case ErrorCode.Internal:
      return 500;
    default:
      return assertUnreachable(code);
  }
}

function rpcMessage(error: RpcError): string {
  switch (error.code) {
    case ErrorCode.NoSession:
      return 'No session';
    case ErrorCode.Timeout:
      return 'Session worker did not answer in time';
    case ErrorCode.CapacityExhausted:
      return 'No session worker has capacity for this instance';
    case ErrorCode.Fenced:
      return 'Session is moving to another worker, try again';
    case ErrorCode.Internal:
      return 'Internal server error';
    default:
      return error.message;
  }
}
