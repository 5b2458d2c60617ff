import type { SchemaObject } from '@nestjs/swagger';

/**
 * Response schemas several routes share, named as uazapiGO's reference names them
 * (components.schemas there). A route points at one with `@ApiReply(SCHEMAS.Message)`; the document
 * lists each once under components.schemas and refers to it.
 */
const str = (extra: SchemaObject = {}): SchemaObject => ({ type: 'string', ...extra });
/** A reusable response schema: its component name and its shape. */
export interface NamedSchema {
  readonly name: string;
  readonly schema: SchemaObject;
}

const named = (name: string, schema: SchemaObject): NamedSchema => ({ name, schema });
/** A reference to another schema of this file (the document lists them all under components.schemas). */
const ref = (name: string): SchemaObject => ({ $ref: `#/components/schemas/${name}` }) as SchemaObject;
const object = (properties: Record<string, SchemaObject>, required?: string[]): SchemaObject => ({
  type: 'object',
  properties,
  ...(required ? { required } : {}),
});
export const SCHEMAS = {
  /** `POST /chat/details`: the Chat record with the groups in common and the picture of the size asked for. */
  ChatDetails: named('ChatDetails', {
    allOf: [
      ref('Chat'),
      object({
        common_groups: str({ description: 'Groups in common, comma separated: name(id)' }),
        imagePreview: str({ description: 'Small picture URL (preview=true)' }),
        image: str({ description: 'Full picture URL (preview=false)' }),
      }),
    ],
  }),
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
