import type { SchemaObject } from '@nestjs/swagger';

/**
 * The two schemas no response class generates: the error body every route may answer (`Error`; the
 * catalogue's coded errors are the CodedError class) and the generic object a route without
 * `@ApiReply` would be documented with. Every route's own answer is a response class of its area's
 * `dto/` folder (ADR 0033).
 */
const str = (extra: SchemaObject = {}): SchemaObject => ({ type: 'string', ...extra });
/** A reusable response schema: its component name and its shape. */
export interface NamedSchema {
  readonly name: string;
  readonly schema: SchemaObject;
}

const named = (name: string, schema: SchemaObject): NamedSchema => ({ name, schema });
export const SCHEMAS = {
  /** Every error: `{error}`, the catalogue's `code` where uazapi has one, and the thrower's extra fields. */
  Error: named('Error', {
    type: 'object',
    required: ['error'],
    properties: { error: str(), code: str() },
    additionalProperties: true,
  }),
  /** The default for a route that has not declared its answer yet: some JSON object. */
  Object: named('GenericObject', { type: 'object', additionalProperties: true }),
} as const satisfies Record<string, NamedSchema>;
