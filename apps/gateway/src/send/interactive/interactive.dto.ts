import { ArrayMaxSize, IsArray, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { SendCommonDto } from '../dto/send-common.dto';

/** Entries of a menu (buttons, list sections and rows, poll options): far more than WhatsApp shows. */
export const MAX_CHOICES = 100;
/** Cards of a carousel (WhatsApp shows at most 10). */
export const MAX_CAROUSEL_CARDS = 10;

export const MENU_TYPES = ['button', 'button_legacy', 'list', 'poll', 'carousel'] as const;

export class SendMenuDto extends SendCommonDto {
  @IsOptional() @IsString() type?: string;
  @IsOptional() @IsString({ message: 'text must be a string' }) @MaxLength(65_536) text?: string;
  @IsOptional()
  @IsArray({ message: 'choices must be an array of strings' })
  @ArrayMaxSize(MAX_CHOICES, { message: `choices: at most ${MAX_CHOICES} entries` })
  @IsString({ each: true, message: 'choices must be an array of strings' })
  @MaxLength(2_000, { each: true, message: 'choices: each entry must be at most 2000 characters' })
  choices?: string[];
  @IsOptional() @IsString() @MaxLength(1000) footerText?: string;
  @IsOptional() @IsString() @MaxLength(200) listButton?: string;
  @IsOptional() @IsInt({ message: 'selectableCount must be an integer' }) @Min(0) @Max(100) selectableCount?: number;
  /** URL or base64 image for the header of a button menu. */
  @IsOptional() @IsString() @MaxLength(8_000_000) imageButton?: string;
}

/** Cards are checked by the controller (their buttons name the error precisely). */
export class SendCarouselDto extends SendCommonDto {
  @IsOptional() @IsString({ message: 'text must be a string' }) @MaxLength(65_536) text?: string;
  @IsOptional()
  @IsArray({ message: 'carousel must be an array of cards' })
  @ArrayMaxSize(MAX_CAROUSEL_CARDS, { message: `carousel: at most ${MAX_CAROUSEL_CARDS} cards` })
  carousel?: unknown[];
  @IsOptional() @IsString() @MaxLength(1000) footerText?: string;
}

export class SendPixButtonDto extends SendCommonDto {
  @IsOptional() @IsString() pixType?: string;
  @IsOptional() @IsString() @MaxLength(200) pixKey?: string;
  @IsOptional() @IsString() @MaxLength(200) pixName?: string;
  @IsOptional() @IsString() @MaxLength(4096) text?: string;
}

export class SendRequestPaymentDto extends SendCommonDto {
  /** A number (numeric strings too); checked by the controller. */
  @IsOptional() amount?: unknown;
  @IsOptional() @IsString() @MaxLength(200) orderMessageId?: string;
  @IsOptional() @IsString() @MaxLength(200) pixKey?: string;
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

export class SendLocationButtonDto extends SendCommonDto {
  @IsOptional() @IsString({ message: 'text must be a string' }) @MaxLength(4096) text?: string;
}
