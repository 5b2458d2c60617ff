import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ApiError } from '../common/api-error';

/**
 * The limits of a JSON body, explicit and documented (README, "Limits"). Every route's body is parsed
 * here, before any DTO sees it.
 */
export const JSON_BODY_LIMITS = {
  /** Bytes of one request body (base64 media inline is why it is large). */
  maxBytes: 64 * 1024 * 1024,
  /** Objects and arrays inside each other; no request of the API needs more than a handful. */
  maxDepth: 32,
} as const;

// An unpaired UTF-16 surrogate: Postgres refuses it in text and json columns.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A request body as the handlers get it: an empty body (a client that sends `Content-Type:
 * application/json` on every request, bodies or not) is `{}`; what Postgres cannot store (NUL
 * characters, lone surrogates) and what would overflow a recursive walk (deep nesting) is a 400 naming
 * the field, before anything is written.
 */
export function parseJsonBody(text: string): unknown {
  const trimmed = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (trimmed.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    throw ApiError.badRequest('Malformed JSON body');
  }
  checkJsonValue(value);
  return value;
}

/** Walks the parsed value without recursion (so depth itself cannot overflow the check). */
export function checkJsonValue(root: unknown): void {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value: root, depth: 0, path: '' }];
  while (stack.length) {
    const { value, depth, path } = stack.pop()!;
    if (typeof value === 'string') {
      checkText(value, path || 'body');
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= JSON_BODY_LIMITS.maxDepth) throw ApiError.badRequest(`JSON body nested deeper than ${JSON_BODY_LIMITS.maxDepth} levels`);
    if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, depth: depth + 1, path: `${path}[${index}]` }));
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      const field = path ? `${path}.${key}` : key;
      checkText(key, `the name of ${field}`);
      // What secure-json-parse refused before this parser replaced Fastify's: prototype pollution.
      if (key === '__proto__' || (key === 'constructor' && typeof item === 'object' && item !== null && 'prototype' in item)) {
        throw ApiError.badRequest(`${field} is not allowed`);
      }
      stack.push({ value: item, depth: depth + 1, path: field });
    }
  }
}

/** What Postgres cannot store in text: a NUL character or a lone surrogate, as a 400 naming `field` (bodies, path and query values). */
export function checkText(text: string, field: string): void {
  if (text.includes('\u0000')) throw ApiError.badRequest(`${field} must not contain NUL characters`);
  if (LONE_SURROGATE.test(text)) throw ApiError.badRequest(`${field} is not valid Unicode (lone surrogate)`);
}

/** Our parser for `application/json` (any charset parameter), in place of the framework's default one. */
export function useJsonBodyParser(app: NestFastifyApplication): void {
  app.useBodyParser('application/json', { bodyLimit: JSON_BODY_LIMITS.maxBytes }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body.toString('utf8')));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
