import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateBy, type ValidationArguments } from 'class-validator';
import { ChatNumber, OneOf, RequiredString } from '../dto/field-rules';
import { SendCommonDto } from '../dto/send-common.dto';
import { JSONSchema } from 'class-validator-jsonschema';

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
  @JSONSchema({
    description:
      'The chat to send to: a phone number in international format (digits, country code first), a group (`…@g.us`), a user JID (`…@s.whatsapp.net` or `…@lid`) or a channel (`…@newsletter`); required',
  })
  @IsOptional()
  @IsString({ message: 'number must be a string' })
  @MaxLength(200)
  number?: string;
  @JSONSchema({ description: 'The menu: `button`, `list`, `poll` or `carousel`' })
  @OneOf(MENU_TYPES, `type must be one of ${MENU_TYPES.join(', ')}`)
  type!: (typeof MENU_TYPES)[number];
  @JSONSchema({ description: "The menu's main text; `{{placeholders}}` are filled from the chat" })
  @RequiredString('missing text', 'text must be a string')
  @MaxLength(65_536)
  text!: string;
  // The type rule last: the campaigns answer the last rule that failed.
  @IsArray(arrayOrMissing('missing choices', 'choices must be an array of strings'))
  @ArrayMinSize(1, { message: 'missing choices' })
  @ArrayMaxSize(MAX_CHOICES, { message: `choices: at most ${MAX_CHOICES} entries` })
  @IsString({ each: true, ...arrayOrMissing('missing choices', 'choices must be an array of strings') })
  @MaxLength(2_000, { each: true, message: 'choices: each entry must be at most 2000 characters' })
  @JSONSchema({
    description:
      'The options, one per entry: `text|id` for a reply button or list row, `text|url:https://…`, `text|call:+55…` or `text|copy:code` for the other buttons, `[Section]` to start a list section, plain text for a poll option',
  })
  choices!: string[];
  @JSONSchema({ description: 'A footer under the text (buttons and lists)' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  footerText?: string;
  @JSONSchema({ description: 'The label of the button that opens a list' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  listButton?: string;
  /** `listButton` under its older name (published clients send it): used when `listButton` is absent. */
  @JSONSchema({ description: 'The same as `listButton` under its older name, used when `listButton` is absent' })
  @IsOptional()
  @IsString({ message: 'buttonText must be a string' })
  @MaxLength(200)
  buttonText?: string;
  @JSONSchema({ description: 'How many options a poll voter may choose (1 by default)' })
  @IsOptional()
  @IsInt({ message: 'selectableCount must be an integer' })
  @Min(0)
  @Max(100)
  selectableCount?: number;
  /** URL or base64 image for the header of a button menu. */
  @JSONSchema({ description: 'An image above a button menu: a URL or base64' })
  @IsOptional()
  @IsString()
  @MaxLength(8_000_000)
  imageButton?: string;
}

/** Cards are checked by the service (their buttons name the error precisely). */
export class SendCarouselDto extends SendCommonDto {
  @JSONSchema({
    description:
      'The chat to send to: a phone number in international format (digits, country code first), a group (`…@g.us`), a user JID (`…@s.whatsapp.net` or `…@lid`) or a channel (`…@newsletter`)',
  })
  @ChatNumber('missing number')
  number!: string;
  @JSONSchema({ description: 'The main text above the cards' })
  @RequiredString('missing text', 'text must be a string')
  @MaxLength(65_536)
  text!: string;
  @IsArray(arrayOrMissing('missing carousel: give at least one card', 'carousel must be an array of cards'))
  @ArrayMinSize(1, { message: 'missing carousel: give at least one card' })
  @ArrayMaxSize(MAX_CAROUSEL_CARDS, { message: `carousel: at most ${MAX_CAROUSEL_CARDS} cards` })
  @JSONSchema({
    description:
      'The cards: each an object with `text`, `image`, `video` or `document` (a URL or base64) and its `buttons` (`{id, text, type}`, type `REPLY`, `URL`, `COPY` or `CALL`)',
  })
  carousel!: unknown[];
  @JSONSchema({ description: 'A footer under the main text' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  footerText?: string;
}

export class SendPixButtonDto extends SendCommonDto {
  @JSONSchema({
    description:
      'The chat to send to: a phone number in international format (digits, country code first), a group (`…@g.us`), a user JID (`…@s.whatsapp.net` or `…@lid`) or a channel (`…@newsletter`)',
  })
  @ChatNumber('missing number')
  number!: string;
  /** Checked by the service: uazapi's message for it names no field, which the validation pipe would prefix. */
  @JSONSchema({ description: "The PIX key's type: `CPF`, `CNPJ`, `PHONE`, `EMAIL` or `EVP` (any case)" })
  @IsOptional()
  @IsString()
  pixType?: string;
  @JSONSchema({ description: 'The PIX key (CPF, CNPJ, phone, email or random EVP key)' })
  @RequiredString('Missing pixKey or pixCode')
  @MaxLength(200)
  pixKey!: string;
  @JSONSchema({ description: 'The receiver\'s name shown with the key ("Pix" when absent)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  pixName?: string;
  @JSONSchema({ description: 'A text shown with the button' })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  text?: string;
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
  @JSONSchema({
    description:
      'The chat to send to: a phone number in international format (digits, country code first), a group (`…@g.us`), a user JID (`…@s.whatsapp.net` or `…@lid`) or a channel (`…@newsletter`)',
  })
  @ChatNumber('missing number')
  number!: string;
  /** A number (numeric strings too); absent when an order gives it (`missing amount` then comes from the service). */
  @JSONSchema({ description: 'The amount to pay, in `currency` (BRL by default); a positive number or numeric string', example: 199.9 })
  @PositiveAmount()
  amount?: unknown;
  @JSONSchema({ description: 'The id of an order message this request answers (its amount is used when `amount` is absent)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  orderMessageId?: string;
  @JSONSchema({ description: 'A static PIX key (CPF, CNPJ, phone, email or EVP); one of `pixKey`, `pixCode`, `boletoCode` or `paymentLink` is required' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  pixKey?: string;
  /** EVP when absent; checked by the service (see SendPixButtonDto). */
  @JSONSchema({ description: "The PIX key's type: `CPF`, `CNPJ`, `PHONE`, `EMAIL` or `EVP` (the default)" })
  @IsOptional()
  @IsString()
  pixType?: string;
  @JSONSchema({ description: "The receiver's name shown in the flow" })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  pixName?: string;
  /** Dynamic PIX ("copia e cola") code. */
  @JSONSchema({ description: 'A dynamic PIX ("copia e cola") code' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  pixCode?: string;
  @JSONSchema({ description: 'The message shown in the body' })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  text?: string;
  @JSONSchema({ description: 'The title in the header' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;
  @JSONSchema({ description: 'The footer of the message' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  footer?: string;
  @JSONSchema({ description: 'The name of the item paid for' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  itemName?: string;
  @JSONSchema({ description: 'The invoice or order number' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  invoiceNumber?: string;
  @JSONSchema({ description: 'An external checkout URL, shown as a button' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  paymentLink?: string;
  @JSONSchema({ description: 'A document to attach (a boleto or invoice PDF, say): a URL or base64' })
  @IsOptional()
  @IsString()
  @MaxLength(96 * 1024 * 1024)
  fileUrl?: string;
  @JSONSchema({ description: 'The file name shown for `fileUrl`' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  fileName?: string;
  @JSONSchema({ description: "A boleto's digitable line (enables the boleto method)" })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  boletoCode?: string;
  @JSONSchema({ description: 'The currency code (BRL by default)' })
  @IsOptional()
  @IsString()
  @MaxLength(3)
  currency?: string;
  @JSONSchema({ description: 'An extra note shown in the flow' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  additionalNote?: string;
}

/** `number` and `text` are required, checked by the service: uazapi's message for them names neither field, which the validation pipe would prefix. */
export class SendLocationButtonDto extends SendCommonDto {
  @JSONSchema({
    description:
      'The chat to send to: a phone number in international format (digits, country code first), a group (`…@g.us`), a user JID (`…@s.whatsapp.net` or `…@lid`) or a channel (`…@newsletter`); required',
  })
  @IsOptional()
  @IsString({ message: 'number must be a string' })
  @MaxLength(200)
  number?: string;
  @JSONSchema({ description: 'The text shown above the button; required' })
  @IsOptional()
  @IsString({ message: 'text must be a string' })
  @MaxLength(4096)
  text?: string;
}
