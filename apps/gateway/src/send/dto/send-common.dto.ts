import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ChatNumber, OneOf, RequiredString, UrlOrBase64 } from './field-rules';

/**
 * The fields every send endpoint takes (spec "Common optional fields of send endpoints"). Each
 * endpoint declares `number` first, with the message it answers when the number is missing.
 */
export class SendCommonDto {
  @IsOptional() @IsInt({ message: 'delay must be an integer (milliseconds)' }) @Min(0) @Max(300_000) delay?: number;
  @IsOptional() @IsBoolean() readchat?: boolean;
  @IsOptional() @IsBoolean() readmessages?: boolean;
  @IsOptional() @IsString() @MaxLength(200) replyid?: string;
  @IsOptional() @IsString() @MaxLength(20_000) mentions?: string;
  @IsOptional() @IsBoolean() forward?: boolean;
  @IsOptional() @IsString() @MaxLength(500) track_source?: string;
  @IsOptional() @IsString() @MaxLength(500) track_id?: string;
  @IsOptional() @IsBoolean() async?: boolean;
}

export class SendTextDto extends SendCommonDto {
  @ChatNumber('missing number or text') number!: string;
  @RequiredString('missing number or text') @MaxLength(65_536) text!: string;
  @IsOptional() @IsBoolean() linkPreview?: boolean;
  @IsOptional() @IsString() @MaxLength(1000) linkPreviewTitle?: string;
  @IsOptional() @IsString() @MaxLength(5000) linkPreviewDescription?: string;
  @IsOptional() @IsString() @MaxLength(8_000_000) @UrlOrBase64() linkPreviewImage?: string;
  @IsOptional() @IsBoolean() linkPreviewLarge?: boolean;
}

export const MEDIA_TYPES = ['image', 'video', 'videoplay', 'document', 'audio', 'myaudio', 'ptt', 'ptv', 'sticker'] as const;

export class SendMediaDto extends SendCommonDto {
  @ChatNumber('missing number') number!: string;
  @OneOf(MEDIA_TYPES, `type must be one of ${MEDIA_TYPES.join(', ')}`) type!: (typeof MEDIA_TYPES)[number];
  /** URL or base64 (optionally a data URI). */
  @RequiredString('missing file (a URL or base64)') @MaxLength(96 * 1024 * 1024) file!: string;
  @IsOptional() @IsString() @MaxLength(65_536) text?: string;
  /** The caption under another name (published clients send it): used when `text` is absent. */
  @IsOptional() @IsString({ message: 'caption must be a string' }) @MaxLength(65_536) caption?: string;
  @IsOptional() @IsString() @MaxLength(255) docName?: string;
  @IsOptional() @IsString() @MaxLength(2_000_000) @UrlOrBase64() thumbnail?: string;
  @IsOptional() @IsString() @MaxLength(255) mimetype?: string;
  @IsOptional() @IsBoolean() viewOnce?: boolean;
}

export class SendContactDto extends SendCommonDto {
  @ChatNumber('missing number') number!: string;
  @RequiredString('missing fullName') @MaxLength(255) fullName!: string;
  /** Comma-separated numbers (each checked by the vCard builder, which names the wrong one). */
  @RequiredString('missing phoneNumber') @MaxLength(2000) phoneNumber!: string;
  @IsOptional() @IsString() @MaxLength(255) organization?: string;
  @IsOptional() @IsString() @MaxLength(255) email?: string;
  @IsOptional() @IsString() @MaxLength(2000) url?: string;
}

export const LOCATION_ERROR = 'missing required fields or invalid coordinates';

/**
 * `number` and the coordinates are required, checked by the service and the location builder: uazapi's
 * message for them names no field, which the validation pipe would prefix.
 */
export class SendLocationDto extends SendCommonDto {
  @IsOptional() @IsString({ message: 'number must be a string' }) @MaxLength(200) number?: string;
  @IsOptional() @IsString() @MaxLength(1000) name?: string;
  @IsOptional() @IsString() @MaxLength(1000) address?: string;
  /** Numbers, or numeric strings, within ±90 and ±180. */
  @IsOptional() latitude?: unknown;
  @IsOptional() longitude?: unknown;
}

export const PRESENCES = ['composing', 'recording', 'paused'] as const;

export class ChatPresenceDto {
  @ChatNumber('missing number') number!: string;
  @OneOf(PRESENCES, 'presence must be composing, recording or paused') presence!: (typeof PRESENCES)[number];
  @IsOptional() @IsInt() @Min(0) @Max(300_000) delay?: number;
}
