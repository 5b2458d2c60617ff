import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { IS_OPTIONAL, type ValidationError, ValidationTypes, getMetadataStorage, validate } from 'class-validator';
import { ApiError } from './api-error';

/**
 * class-validator looks a class's rules up again on every call: it filters the class's metadata and
 * walks every decorated class in the process for parents (~4% of an async accept's CPU in bench/queue).
 * The rules of a class only change while decorators run (class definition), so the answer is kept per
 * (class, options) until a decorator adds a rule, which forgets everything kept. Calls with groups are
 * not kept (we use none; their key would need the array's contents).
 */
function memoiseValidationMetadata(): void {
  type Storage = ReturnType<typeof getMetadataStorage> & { __gwMemoised?: true };
  const storage = getMetadataStorage() as Storage;
  if (storage.__gwMemoised) return;
  storage.__gwMemoised = true;
  let rules = new Map<unknown, unknown[]>();
  let grouped = new WeakMap<object, unknown>();
  const forget = () => {
    rules = new Map();
    grouped = new WeakMap();
  };
  const lookUp = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const addMetadata = storage.addValidationMetadata.bind(storage);
  storage.addValidationMetadata = (metadata) => {
    forget();
    addMetadata(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (groups?.length) return lookUp(target, schema, always, strictGroups, groups);
    const key = `${schema}\u0000${always}\u0000${strictGroups}`;
    let byOptions = rules.get(target) as unknown as Map<string, ReturnType<typeof lookUp>> | undefined;
    if (!byOptions) rules.set(target, (byOptions = new Map()) as never);
    let found = byOptions.get(key);
    if (!found) byOptions.set(key, (found = lookUp(target, schema, always, strictGroups, groups)));
    return found;
  };
  // The executor groups the (now identical) array by property on every call too; neither is mutated.
  storage.groupByPropertyName = (metadata) => {
    let found = grouped.get(metadata) as ReturnType<typeof group> | undefined;
    if (!found) grouped.set(metadata, (found = group(metadata)));
    return found;
  };
}
memoiseValidationMetadata();

/**
 * Validates bodies, and a route's whole query string taken as one DTO (`@Query() query: SomeQueryDto`),
 * against their DTO class. The first problem becomes a 400 `{error}` that names the field; unknown fields
 * are dropped (clients of the API send extra ones), never stored. Single query values (`@Query('name')`)
 * are the route's to read.
 */
@Injectable()
export class DtoValidationPipe implements PipeTransform {
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    if (!type || [String, Boolean, Number, Array, Object].includes(type as never)) return value;
    if (metadata.type === 'query' && metadata.data === undefined) return validateBody(type as new () => object, (value ?? {}) as object);
    if (metadata.type !== 'body') return value;
    if (value === undefined || value === null) value = {};
    if (typeof value !== 'object' || Array.isArray(value)) throw ApiError.badRequest('Invalid request payload: the body must be a JSON object');
    return validateBody(type as new () => object, value as object);
  }
}

/** `value` as an instance of `type`, checked by its rules as a body is (unknown fields dropped), or a 400 naming the first wrong field. */
export async function validateBody<T extends object>(type: new () => T, value: object): Promise<T> {
  const instance = plainToInstance(type, value, { enableImplicitConversion: false });
  dropOptionalNulls(instance, value);
  // Every constraint of a field runs (no stopAtFirstError), so the message can name the wrong type
  // first whatever order the decorators were written in (class-validator runs them bottom-up).
  const errors = await validate(instance, { whitelist: true, forbidUnknownValues: false });
  if (errors.length) throw ApiError.badRequest(firstMessage(errors[0]));
  return instance;
}

/**
 * A JSON `null` sent for an `@IsOptional()` field is the field left out, as Go's decoder (uazapiGO's)
 * reads it. class-validator's `@IsOptional()` skips every rule for null as for undefined, so without this
 * the null reached the services, which test `!== undefined` and then call a method on it or write it to
 * a NOT NULL column (a 500). Only a null the client sent and no transform changed, in this body and the
 * nested DTOs it holds; fields whose own rule refuses null (`ValidateIf(value !== undefined)`) keep it.
 */
function dropOptionalNulls(instance: object, raw: unknown, depth = 0): void {
  if (depth > 32 || typeof raw !== 'object' || raw === null) return;
  const target = instance as Record<string, unknown>;
  const sent = raw as Record<string, unknown>;
  for (const key of Object.keys(sent)) {
    const value = target[key];
    if (sent[key] === null) {
      if (value === null && isOptionalField(instance.constructor, key)) delete target[key];
      continue;
    }
    if (Array.isArray(value) && Array.isArray(sent[key])) {
      value.forEach((item, index) => isDtoInstance(item) && dropOptionalNulls(item, (sent[key] as unknown[])[index], depth + 1));
    } else if (isDtoInstance(value)) dropOptionalNulls(value, sent[key], depth + 1);
  }
}

/** A nested DTO (class-transformer made it from a `@Type`), not a free-form object the client owns. */
function isDtoInstance(value: unknown): value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as object | null;
  return prototype !== null && prototype !== Object.prototype;
}

function isOptionalField(type: object, property: string): boolean {
  return getMetadataStorage()
    .getTargetValidationMetadatas(type as new () => object, '', true, false)
    .some((metadata) => metadata.propertyName === property && metadata.type === ValidationTypes.CONDITIONAL_VALIDATION && metadata.name === IS_OPTIONAL);
}

/** Constraints that say what type a field must have: reported before any length or range rule (after a missing value). */
const TYPE_CONSTRAINTS = new Set(['isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isObject']);

function firstMessage(error: ValidationError, path = ''): string {
  const field = path ? `${path}.${error.property}` : error.property;
  if (error.constraints) {
    // A missing required field says so (`isDefined`), before what type it must have.
    const first = error.constraints.isDefined ? 'isDefined' : Object.keys(error.constraints).find((name) => TYPE_CONSTRAINTS.has(name));
    const message = first ? error.constraints[first] : Object.values(error.constraints)[0];
    if (message.startsWith(error.property)) return message.replace(error.property, field);
    return message.includes(error.property) ? message : `${field}: ${message}`;
  }
  if (error.children?.length) return firstMessage(error.children[0], field);
  return `${field} is invalid`;
}
