import { IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** The fields every send endpoint takes (spec "Common optional fields of send endpoints"). */
export class SendCommonDto {
  @IsOptional()
  @IsString({ message: 'number must be a string' })
  @MaxLength(200)
  number?: string;

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
  @IsOptional() @IsString({ message: 'text must be a string' }) @MaxLength(65_536) text?: string;
  @IsOptional() @IsBoolean() linkPreview?: boolean;
  @IsOptional() @IsString() @MaxLength(1000) linkPreviewTitle?: string;
  @IsOptional() @IsString() @MaxLength(5000) linkPreviewDescription?: string;
  @IsOptional() @IsString() @MaxLength(8_000_000) linkPreviewImage?: string;
  @IsOptional() @IsBoolean() linkPreviewLarge?: boolean;
}

export const MEDIA_TYPES = ['image', 'video', 'videoplay', 'document', 'audio', 'myaudio', 'ptt', 'ptv', 'sticker'] as const;

export class SendMediaDto extends SendCommonDto {
  @IsOptional() @IsString() type?: string;
  /** URL or base64 (optionally a data URI). */
  @IsOptional() @IsString() @MaxLength(96 * 1024 * 1024) file?: string;
  @IsOptional() @IsString() @MaxLength(65_536) text?: string;
  @IsOptional() @IsString() @MaxLength(255) docName?: string;
  @IsOptional() @IsString() @MaxLength(2_000_000) thumbnail?: string;
  @IsOptional() @IsString() @MaxLength(255) mimetype?: string;
  @IsOptional() @IsBoolean() viewOnce?: boolean;
}

export class SendContactDto extends SendCommonDto {
  @IsOptional() @IsString() @MaxLength(255) fullName?: string;
  /** Comma-separated numbers. */
  @IsOptional() @IsString() @MaxLength(2000) phoneNumber?: string;
  @IsOptional() @IsString() @MaxLength(255) organization?: string;
  @IsOptional() @IsString() @MaxLength(255) email?: string;
  @IsOptional() @IsString() @MaxLength(2000) url?: string;
}

export class SendLocationDto extends SendCommonDto {
  @IsOptional() @IsString() @MaxLength(1000) name?: string;
  @IsOptional() @IsString() @MaxLength(1000) address?: string;
  /** Numbers, or numeric strings; checked in the service ("invalid coordinates"). */
  @IsOptional() latitude?: unknown;
  @IsOptional() longitude?: unknown;
}

export class ChatPresenceDto {
  @IsOptional() @IsString() @MaxLength(200) number?: string;
  @IsOptional() @IsString() presence?: string;
  @IsOptional() @IsInt() @Min(0) @Max(300_000) delay?: number;
}
