import type { FastifyRequest } from 'fastify';
import { ApiError } from '../common/api-error';
import { checkText } from './json-body';

/**
 * The limits of what a URL carries, checked once for every route (an `onRequest` hook, before any guard
 * or query): path parameters at most 100 characters (the router's own limit, answered as a 400 by
 * `frameworkErrors`), query names at most 100 and values at most 1,000, none with a NUL character or a
 * lone surrogate (Postgres refuses both, and the guards look ids up before any DTO sees them).
 */
export const URL_VALUE_LIMITS = { maxParamLength: 100, maxQueryNameLength: 100, maxQueryValueLength: 1000 } as const;

/** Throws a 400 `{error}` for the first path or query value the API cannot take; values are never echoed. */
export function checkUrlValues(request: Pick<FastifyRequest, 'params' | 'query'>): void {
  const params = request.params as Record<string, unknown> | null | undefined;
  if (params) {
    for (const name in params) {
      const value = params[name];
      if (typeof value !== 'string') continue;
      checkText(value, `path parameter ${name}`);
      if (value.length > URL_VALUE_LIMITS.maxParamLength)
        throw ApiError.badRequest(`path parameter ${name} is longer than ${URL_VALUE_LIMITS.maxParamLength} characters`);
    }
  }
  const query = request.query as Record<string, unknown> | null | undefined;
  if (!query) return;
  for (const name in query) {
    checkText(name, 'a query parameter name');
    if (name.length > URL_VALUE_LIMITS.maxQueryNameLength)
      throw ApiError.badRequest(`a query parameter name is longer than ${URL_VALUE_LIMITS.maxQueryNameLength} characters`);
    const value = query[name];
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item !== 'string') continue;
      checkText(item, `query parameter ${name}`);
      if (item.length > URL_VALUE_LIMITS.maxQueryValueLength)
        throw ApiError.badRequest(`query parameter ${name} is longer than ${URL_VALUE_LIMITS.maxQueryValueLength} characters`);
    }
  }
}

/**
 * Fastify's own refusals before routing (`frameworkErrors`: a URL whose percent-encoding is not UTF-8, a
 * path parameter over the router's limit) as the catalogue's 400 `{error}`, not Fastify's error body.
 */
export function frameworkError(error: { code?: string }): ApiError {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return ApiError.badRequest(`a path parameter is longer than ${URL_VALUE_LIMITS.maxParamLength} characters`);
  if (error.code === 'FST_ERR_BAD_URL') return ApiError.badRequest('The URL is not valid: its percent-encoding is not UTF-8');
  return ApiError.badRequest('The URL is not valid');
}
