import { Catch } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../common/api-error';
import { ErrorFilter } from '../common/error.filter';

/**
 * The quick-reply routes give every error a `code` (seed "Errors"): a bad value is `validation_failed`,
 * the rest carry their kind. A wrong token keeps uazapi's `{error: 'Invalid token'}` on these routes.
 */
@Catch()
export class QuickReplyErrorFilter extends ErrorFilter {
  protected override shape(error: ApiError, _request?: FastifyRequest): ApiError {
    if (error.kind === 'invalid_request') return new ApiError('validation_failed', error.message, error.extra);
    if (error.kind === 'invalid_token' || 'code' in error.body()) return error;
    return new ApiError(error.kind, error.message, { code: error.kind, ...error.extra });
  }
}

/** `GET /quick-replies/{id}`: the same, and a missing or wrong token is `{code: 401, message, data}`. */
@Catch()
export class QuickReplyRecordErrorFilter extends QuickReplyErrorFilter {
  protected override shape(error: ApiError, request: FastifyRequest): ApiError {
    if (error.kind === 'invalid_token') return new ApiError('invalid_token_coded', error.message);
    return super.shape(error, request);
  }
}
