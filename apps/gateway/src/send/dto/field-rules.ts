import { applyDecorators } from '@nestjs/common';
import { isBase64, parseChatTarget } from '@gw/domain';
import { IsIn, IsString, Matches, MaxLength, ValidateBy, type ValidationArguments } from 'class-validator';

/**
 * Field rules of the send bodies, each with the message the API has always answered. The validation
 * pipe reports a failed type rule before any other (apps/gateway/src/common/validation.ts), and an
 * absent field fails its type rule too; so a required field's type rule names what is missing when the
 * field is absent, and the type when it is present. A message that names no field is prefixed with
 * the field's name by the pipe: rules whose uazapi message names none stay in the services.
 */

export const INVALID_NUMBER = 'Invalid number: give an international phone number or a JID (@s.whatsapp.net, @lid, @g.us, @newsletter)';

const absent = (value: unknown) => value === undefined || value === null;

/** The type rule's message: `missing` for an absent field, else "<field> must be a string" (or `wrongType`). */
function stringOrMissing(missing: string, wrongType?: string) {
  return { message: (args: ValidationArguments) => (absent(args.value) ? missing : (wrongType ?? `${args.property} must be a string`)) };
}

/** A string with something besides whitespace. The type rule comes last, as the campaigns read the last rule that failed. */
export function RequiredString(missing: string, wrongType?: string): PropertyDecorator {
  return applyDecorators(Matches(/\S/, { message: missing }), IsString(stringOrMissing(missing, wrongType)));
}

/** One of `values` (absent: `message` too). */
export function OneOf(values: readonly string[], message: string): PropertyDecorator {
  return applyDecorators(IsIn([...values], { message }), IsString(stringOrMissing(message)));
}

/** The chat a send goes to: an international phone number or a JID (`missing`: what an absent or blank one answers; it must name a field, as the pipe prefixes a message that names none). */
export function ChatNumber(missing: string): PropertyDecorator {
  return applyDecorators(
    IsString(stringOrMissing(missing, 'number must be a string')),
    MaxLength(200),
    ValidateBy({
      name: 'isChatTarget',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && value.trim() !== '' && parseChatTarget(value) !== null,
        defaultMessage: (args?: ValidationArguments) => (typeof args?.value === 'string' && args.value.trim() === '' ? missing : INVALID_NUMBER),
      },
    }),
  );
}

/** A number, or a string holding one; NaN for anything else. */
export function numberLike(value: unknown): number {
  if (typeof value === 'number') return value;
  return typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
}

/** An integer (a number or numeric string) that `accept`s; absent fields (undefined, null, '') pass. */
export function IntegerLike(accept: (value: number) => boolean, message: string): PropertyDecorator {
  return ValidateBy({
    name: 'isIntegerLike',
    validator: {
      validate: (value: unknown) => {
        if (absent(value) || value === '') return true;
        const number = numberLike(value);
        return Number.isInteger(number) && accept(number);
      },
      defaultMessage: () => message,
    },
  });
}

/** An integer field that passed IntegerLike, as a number (undefined when absent). */
export function integerOf(value: unknown): number | undefined {
  return absent(value) || value === '' ? undefined : numberLike(value);
}

/**
 * An image given inline or by link: an http(s) URL, or base64 (optionally a data URI). Blank passes
 * (a link preview's blank image means "none"). Anything else would reach WhatsApp as broken bytes.
 */
export function isUrlOrBase64(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const trimmed = value.trim();
  if (trimmed === '') return true;
  // No anchored `+` patterns over the whole value: V8's backtracking stack grows with it (see isBase64).
  if (/^https?:\/\//i.test(trimmed)) return !/\s/.test(trimmed) && URL.canParse(trimmed);
  const data = trimmed.replace(/^data:[\w.+-]+\/[\w.+-]+(;[\w.+-]+=[\w.+-]+)*;base64,/i, '').replace(/\s+/g, '');
  return data.length % 4 === 0 && isBase64(data);
}

/** A field that takes an image as `isUrlOrBase64` does; the message names the field. */
export function UrlOrBase64(): PropertyDecorator {
  return ValidateBy({
    name: 'isUrlOrBase64',
    validator: {
      validate: (value: unknown) => absent(value) || isUrlOrBase64(value),
      defaultMessage: (args?: ValidationArguments) => `${args?.property ?? 'the field'} must be an http(s) URL or base64`,
    },
  });
}
