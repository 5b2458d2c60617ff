import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateBy, type ValidationArguments } from 'class-validator';
import { ChatNumber, OneOf, RequiredString } from '../dto/field-rules';
import { SendCommonDto } from '../dto/send-common.dto';

/** Entries of a menu (buttons, list sections and rows, poll options): far more than WhatsApp shows. */
export const MAX_CHOICES = 100;
/** Cards of a carousel (WhatsApp shows at most 10). */
export const MAX_CAROUSEL_CARDS = 10;

export const MENU_TYPES = ['button', 'button_legacy', 'list', 'poll', 'carousel'] as const;

export const INVALID_KEY_TYPE = 'Invalid keyType. Allowed: CPF, CNPJ, PHONE, EMAIL, EVP';

/** An absent array answers `missing`; anything else that is not an array of strings, `wrongType`. */
const arrayOrMissing = (missing: string, wrongType: string) => ({
  message: (args: ValidationArguments) => (args.value === undefined || args.value === null ? missing : wrongType),
});

/**
 * `POST /send/menu`. The campaigns (`/sender/*`) check their menu messages with this DTO too, and
 * give the chat apart: `number` stays optional here and is checked by the service.
 */
export class SendMenuDto extends SendCommonDto {
  @IsOptional() @IsString({ message: 'number must be a string' }) @MaxLength(200) number?: string;
  @OneOf(MENU_TYPES, `type must be one of ${MENU_TYPES.join(', ')}`) type!: (typeof MENU_TYPES)[number];
  @RequiredString('missing text', 'text must be a string') @MaxLength(65_536) text!: string;
  // The type rule last: the campaigns answer the last rule that failed.
  @IsArray(arrayOrMissing('missing choices', 'choices must be an array of strings'))
  @ArrayMinSize(1, { message: 'missing choices' })
  @ArrayMaxSize(MAX_CHOICES, { message: `choices: at most ${MAX_CHOICES} entries` })
  @IsString({ each: true, ...arrayOrMissing('missing choices', 'choices must be an array of strings') })
  @MaxLength(2_000, { each: true, message: 'choices: each entry must be at most 2000 characters' })
  choices!: string[];
  @IsOptional() @IsString() @MaxLength(1000) footerText?: string;
  @IsOptional() @IsString() @MaxLength(200) listButton?: string;
  /** `listButton` under its older name (published clients send it): used when `listButton` is absent. */
  @IsOptional() @IsString({ message: 'buttonText must be a string' }) @MaxLength(200) buttonText?: string;
  @IsOptional() @IsInt({ message: 'selectableCount must be an integer' }) @Min(0) @Max(100) selectableCount?: number;
  /** URL or base64 image for the header of a button menu. */
  @IsOptional() @IsString() @MaxLength(8_000_000) imageButton?: string;
}

/** Cards are checked by the service (their buttons name the error precisely). */
export class SendCarouselDto extends SendCommonDto {
  @ChatNumber('missing number') number!: string;
  @RequiredString('missing text', 'text must be a string') @MaxLength(65_536) text!: string;
  @IsArray(arrayOrMissing('missing carousel: give at least one card', 'carousel must be an array of cards'))
  @ArrayMinSize(1, { message: 'missing carousel: give at least one card' })
  @ArrayMaxSize(MAX_CAROUSEL_CARDS, { message: `carousel: at most ${MAX_CAROUSEL_CARDS} cards` })
  carousel!: unknown[];
  @IsOptional() @IsString() @MaxLength(1000) footerText?: string;
}

export class SendPixButtonDto extends SendCommonDto {
  @ChatNumber('missing number') number!: string;
  /** Checked by the service: uazapi's message for it names no field, which the validation pipe would prefix. */
  @IsOptional() @IsString() pixType?: string;
  @RequiredString('Missing pixKey or pixCode') @MaxLength(200) pixKey!: string;
  @IsOptional() @IsString() @MaxLength(200) pixName?: string;
  @IsOptional() @IsString() @MaxLength(4096) text?: string;
}

/** A positive amount: a number, or anything `Number()` reads as one (numeric strings); absent ('' too) passes. */
function PositiveAmount(): PropertyDecorator {
  return ValidateBy({
    name: 'isPositiveAmount',
    validator: {
      validate: (value: unknown) => value === undefined || value === null || value === '' || (Number.isFinite(Number(value)) && Number(value) > 0),
      defaultMessage: () => 'amount must be a positive number',
    },
  });
}

/** One of pixKey, pixCode, boletoCode or paymentLink is required: the service checks it (a rule over several fields). */
export class SendRequestPaymentDto extends SendCommonDto {
  @ChatNumber('missing number') number!: string;
  /** A number (numeric strings too); absent when an order gives it (`missing amount` then comes from the service). */
  @PositiveAmount() amount?: unknown;
  @IsOptional() @IsString() @MaxLength(200) orderMessageId?: string;
  @IsOptional() @IsString() @MaxLength(200) pixKey?: string;
  /** EVP when absent; checked by the service (see SendPixButtonDto). */
  @IsOptional() @IsString() pixType?: string;
  @IsOptional() @IsString() @MaxLength(200) pixName?: string;
  /** Dynamic PIX ("copia e cola") code. */
  @IsOptional() @IsString() @MaxLength(2000) pixCode?: string;
  @IsOptional() @IsString() @MaxLength(4096) text?: string;
  @IsOptional() @IsString() @MaxLength(200) title?: string;
  @IsOptional() @IsString() @MaxLength(1000) footer?: string;
  @IsOptional() @IsString() @MaxLength(200) itemName?: string;
  @IsOptional() @IsString() @MaxLength(100) invoiceNumber?: string;
  @IsOptional() @IsString() @MaxLength(2000) paymentLink?: string;
  @IsOptional() @IsString() @MaxLength(96 * 1024 * 1024) fileUrl?: string;
  @IsOptional() @IsString() @MaxLength(255) fileName?: string;
  @IsOptional() @IsString() @MaxLength(200) boletoCode?: string;
  @IsOptional() @IsString() @MaxLength(3) currency?: string;
  @IsOptional() @IsString() @MaxLength(1000) additionalNote?: string;
}

/** `number` and `text` are required, checked by the service: uazapi's message for them names neither field, which the validation pipe would prefix. */
export class SendLocationButtonDto extends SendCommonDto {
  @IsOptional() @IsString({ message: 'number must be a string' }) @MaxLength(200) number?: string;
  @IsOptional() @IsString({ message: 'text must be a string' }) @MaxLength(4096) text?: string;
}
