import type { Type } from '@nestjs/common';
import { ApiExtraModels, type SchemaObject } from '@nestjs/swagger';
import type { ApiErrorKind } from '../common/api-error';
import type { NamedSchema } from './schemas';

/** What a route answers on success, for the OpenAPI document (`@ApiReply`). */
export interface ApiReplyOptions {
  /** A body the route answers, shown as the response's example. */
  example?: unknown;
  /** Several bodies the route answers, by name (e.g. sent now, and queued with `async`), instead of one `example`. */
  examples?: Record<string, { summary: string; value: unknown }>;
  /** What the answer is, in a few words (defaults to "Success"). */
  description?: string;
  /** The answer is an array of the schema. */
  isArray?: boolean;
  /** The answer's media type when it is not JSON (e.g. `text/event-stream`). */
  contentType?: string;
  /** Statuses besides the success one that answer the same body, each with what it means (e.g. `{ 207: 'Some fields changed' }`). */
  otherStatuses?: Record<number, string>;
  /** The route may answer a 302 to another URL (its `Location`) instead of the body: what that means. */
  redirect?: string;
  /** The error kinds the route can answer, when they differ from what its guard implies (see openapi.document.ts). */
  errors?: readonly ApiErrorKind[];
}

export interface ApiReplyMetadata extends ApiReplyOptions {
  schema: NamedSchema | SchemaObject | Type;
}

export const API_REPLY_METADATA = 'gw:openapi:reply';

/**
 * Documents a route's answer and an example body: a response class of the area's `dto/` folder (its
 * schema is generated from its `@ApiProperty` fields and referenced by its `@ApiSchema` name, see ADR
 * 0033), or an inline schema for what no one class states (one of several classes, a file's bytes);
 * `SCHEMAS` holds only the error body and the generic object. Only read when the OpenAPI document is built; routes without it are documented as
 * answering a generic JSON object.
 */
export function ApiReply(schema: Type | NamedSchema | SchemaObject, options: ApiReplyOptions = {}): MethodDecorator {
  return (target, key, descriptor) => {
    Reflect.defineMetadata(API_REPLY_METADATA, { schema, ...options } satisfies ApiReplyMetadata, descriptor.value as object);
    // @nestjs/swagger's scanner then writes the class's schema (and those it refers to) under components.schemas.
    if (typeof schema === 'function') ApiExtraModels(schema)(target, key, descriptor);
    return descriptor;
  };
}

export function apiReplyOf(handler: object): ApiReplyMetadata | undefined {
  return Reflect.getMetadata(API_REPLY_METADATA, handler) as ApiReplyMetadata | undefined;
}
