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
    const errors = await validate(instance, { whitelist: true, forbidUnknownValues: false, stopAtFirstError: true });
    if (errors.length) throw ApiError.badRequest(firstMessage(errors[0]));
    return instance;
  }
}

function firstMessage(error: ValidationError, path = ''): string {
  const field = path ? `${path}.${error.property}` : error.property;
  if (error.constraints) {
    const message = Object.values(error.constraints)[0];
    if (message.startsWith(error.property)) return message.replace(error.property, field);
    return message.includes(error.property) ? message : `${field}: ${message}`;
  }
  if (error.children?.length) return firstMessage(error.children[0], field);
  return `${field} is invalid`;
}
