import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

export const CONTACT_SCOPES = ['address_book', 'outside_address_book', 'all'] as const;
export type ContactScopeName = (typeof CONTACT_SCOPES)[number];
export const CONTACT_SCOPE_MESSAGE = `contactScope must be one of ${CONTACT_SCOPES.join(', ')}`;
export const INVALID_NUMBER = 'Invalid number';

/** Numbers may come as numeric strings (older clients); '' is absent. */
const Numeric = () =>
  Transform(({ value }: { value: unknown }) => {
    if (value === '' || value === null) return undefined;
    if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
    return value;
  });

/** An optional whole number from `min` to `max` (a numeric string too), refused with one message naming the range. */
const OptionalInteger = (field: string, min: number, max = Number.MAX_SAFE_INTEGER): PropertyDecorator => {
  const message = max === Number.MAX_SAFE_INTEGER ? `${field} must be an integer of ${min} or more` : `${field} must be an integer between ${min} and ${max}`;
  return applyDecorators(Numeric(), IsOptional(), IsInt({ message }), Min(min, { message }), Max(max, { message }));
};

/**
 * `POST /contacts/list`: a page of the contacts (limit 1 to 1000, default 100) of one scope (default
 * `address_book`), by `limit`/`offset` or (older clients) `page` (from 1) and `pageSize`.
 */
export class ContactListDto {
  @JSONSchema({ description: 'Contacts per page (100 by default, at most 1000)' })
  @OptionalInteger('limit', 1, 1000)
  limit?: number;
  @JSONSchema({ description: 'How many contacts to skip' })
  @OptionalInteger('offset', 0)
  offset?: number;
  /** The older paging: the page, from 1. */
  @JSONSchema({ description: 'Older paging: the page, from 1 (with `pageSize`)' })
  @OptionalInteger('page', 1)
  page?: number;
  /** The older paging: contacts per page. */
  @JSONSchema({ description: 'Older paging: items per page' })
  @OptionalInteger('pageSize', 1, 1000)
  pageSize?: number;

  @JSONSchema({ description: '`address_book` (the default), `outside_address_book` or `all`' })
  @IsOptional()
  @IsString({ message: CONTACT_SCOPE_MESSAGE })
  @IsIn(CONTACT_SCOPES, { message: CONTACT_SCOPE_MESSAGE })
  contactScope?: ContactScopeName;
}

/** `number` (the reference's spelling), required unless an older client sends `phone`. */
export class ContactNumberDto {
  @ValidateIf((dto: { number?: unknown; phone?: unknown }) => dto.number !== undefined || dto.phone === undefined)
  @IsDefined({ message: 'number is required' })
  @IsString({ message: INVALID_NUMBER })
  @MaxLength(100, { message: INVALID_NUMBER })
  @JSONSchema({ description: 'The phone number, international format with its country code (`+`, spaces, dashes and parentheses are accepted)' })
  number?: string;

  /** The older spelling of `number`. */
  @JSONSchema({ description: 'The same as `number`, under its older name' })
  @IsOptional()
  @IsString({ message: INVALID_NUMBER })
  @MaxLength(100, { message: INVALID_NUMBER })
  phone?: string;
}

/** `POST /contact/add`: a number and the name saved for it (full and first name). */
export class ContactAddDto extends ContactNumberDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @Matches(/\S/, { message: 'name is required' })
  @MaxLength(256, { message: 'name must be at most 256 characters' })
  @JSONSchema({ description: "The contact's name (its full and first name)" })
  name!: string;
}

/** `POST /chat/check`: numbers (or group JIDs) to look up on WhatsApp. */
export class ChatCheckDto {
  @IsDefined({ message: 'Missing numbers in payload' })
  @IsArray({ message: 'numbers must be an array of strings' })
  @ArrayMaxSize(500, { message: 'numbers must name at most 500 numbers' })
  @IsString({ each: true, message: 'numbers must be an array of strings' })
  @MaxLength(100, { each: true, message: 'numbers must be an array of strings' })
  @JSONSchema({ description: 'The phone numbers or group JIDs to look up' })
  numbers!: string[];
}

/** `POST /chat/details`: a chat by number, JID (user, LID or group); `preview` picks the small picture. */
export class ChatDetailsDto {
  @IsDefined({ message: 'number is required' })
  @IsString({ message: 'number must be a string' })
  @MaxLength(100, { message: 'Invalid number' })
  @JSONSchema({ description: 'The phone number or group JID' })
  number!: string;

  @JSONSchema({ description: 'The profile picture small (true) or full size (false, the default)' })
  @IsOptional()
  @IsBoolean({ message: 'preview must be a boolean' })
  preview?: boolean;
}

/** `POST /chat/GetNameAndImageURL` (uazapi 2.0): `/chat/details`' lookup; the answer always carries every name (`returnMoreNames` is accepted). */
export class ChatNameAndImageDto extends ChatDetailsDto {
  @JSONSchema({ description: 'Accepted; the answer always carries every name' })
  @IsOptional()
  @IsBoolean({ message: 'returnMoreNames must be a boolean' })
  returnMoreNames?: boolean;
}
