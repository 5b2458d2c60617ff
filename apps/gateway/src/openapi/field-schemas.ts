import type { Type } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { getMetadataSchema } from 'class-validator-jsonschema/build/decorators';

/**
 * Mapped types (`OmitType`, `PickType`…) copy a class's validation rules but not its `@JSONSchema`
 * (the fields' descriptions and examples): the derived class takes those of the fields it kept, except
 * the ones it declares again with a schema of its own.
 */
export function inheritFieldSchemas(target: Type, source: Type): void {
  const fields = new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(target, '', true, false)
      .map((metadata) => metadata.propertyName),
  );
  for (const field of fields) {
    if (Object.keys(getMetadataSchema(target.prototype as object, field)).length || typeof getMetadataSchema(target.prototype as object, field) === 'function')
      continue;
    const schema = getMetadataSchema(source.prototype as object, field);
    if (typeof schema === 'function' || Object.keys(schema).length) JSONSchema(schema)(target.prototype as object, field);
  }
}
