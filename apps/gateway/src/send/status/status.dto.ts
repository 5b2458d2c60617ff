import { IsOptional, IsString, MaxLength } from 'class-validator';

export const STATUS_TYPES = ['text', 'image', 'video', 'audio', 'myaudio', 'ptt'] as const;
/** WAProto ExtendedTextMessage.FontType values, the ones uazapi accepts. */
export const STATUS_FONTS = [0, 1, 2, 6, 7, 8, 9, 10] as const;
export const STATUS_TEXT_LIMIT = 656;

/** `POST /send/status`. Numbers and lists are checked by the sender, which names each error. */
export class SendStatusDto {
  @IsOptional() @IsString({ message: 'type must be a string' }) type?: string;
  @IsOptional() @IsString({ message: 'text must be a string' }) @MaxLength(65_536) text?: string;
  @IsOptional() background_color?: unknown;
  @IsOptional() font?: unknown;
  /** URL or base64 of the media. */
  @IsOptional() @IsString({ message: 'file must be a string (a URL or base64)' }) @MaxLength(96 * 1024 * 1024) file?: string;
  /** Accepted and ignored: the thumbnail is made from the media. */
  @IsOptional() @IsString() @MaxLength(2_000_000) thumbnail?: string;
  @IsOptional() @IsString() @MaxLength(255) mimetype?: string;
  @IsOptional() recipients?: unknown;
  @IsOptional() max_recipients?: unknown;
  @IsOptional() @IsString() @MaxLength(500) track_source?: string;
  @IsOptional() @IsString() @MaxLength(500) track_id?: string;
}
