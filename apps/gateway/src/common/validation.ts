import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { type ValidationError, validate } from 'class-validator';
import { ApiError } from './api-error';

/**
 * Validates bodies against their DTO class. The first problem becomes a 400 `{error}` that names the
 * field; unknown fields are dropped (clients of the API send extra ones), never stored.
 */
@Injectable()
export class DtoValidationPipe implements PipeTransform {
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const type = metadata.metatype;
    if (metadata.type !== 'body' || !type || [String, Boolean, Number, Array, Object].includes(type as never)) return value;
    if (value === undefined || value === null) value = {};
    if (typeof value !== 'object' || Array.isArray(value)) throw ApiError.badRequest('Invalid request payload: the body must be a JSON object');
    const instance = plainToInstance(type as new () => object, value, { enableImplicitConversion: false });
    // Every constraint of a field runs (no stopAtFirstError), so the message can name the wrong type
    // first whatever order the decorators were written in (class-validator runs them bottom-up).
    const errors = await validate(instance, { whitelist: true, forbidUnknownValues: false });
    if (errors.length) throw ApiError.badRequest(firstMessage(errors[0]));
    return instance;
  }
}

/** Constraints that say what type a field must have: reported before any length or range rule. */
const TYPE_CONSTRAINTS = new Set(['isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isObject']);

function firstMessage(error: ValidationError, path = ''): string {
  const field = path ? `${path}.${error.property}` : error.property;
  if (error.constraints) {
    const typeCheck = Object.keys(error.constraints).find((name) => TYPE_CONSTRAINTS.has(name));
    const message = typeCheck ? error.constraints[typeCheck] : Object.values(error.constraints)[0];
    if (message.startsWith(error.property)) return message.replace(error.property, field);
    return message.includes(error.property) ? message : `${field}: ${message}`;
  }
  if (error.children?.length) return firstMessage(error.children[0], field);
  return `${field} is invalid`;
}
