import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsBoolean, IsDefined, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/** Something other than blanks. */
const NOT_BLANK = /\S/;

export class ReactDto {
  @IsOptional() @IsString() @MaxLength(200) number?: string;
  /** An emoji; "" removes the reaction. */
  @IsDefined({ message: 'text is required (an emoji, or "" to remove the reaction)' }) @IsString() @MaxLength(64) text!: string;
  @IsDefined({ message: 'id is required' }) @IsString() @MaxLength(200) @Matches(NOT_BLANK, { message: 'id is required' }) id!: string;
}

export class EditDto {
  @IsDefined({ message: 'text is required' }) @IsString() @MaxLength(65_536) @Matches(NOT_BLANK, { message: 'text is required' }) text!: string;
  @IsDefined({ message: 'id is required' }) @IsString() @MaxLength(200) @Matches(NOT_BLANK, { message: 'id is required' }) id!: string;
}

export class DeleteDto {
  @IsDefined({ message: 'id is required' }) @IsString() @MaxLength(200) @Matches(NOT_BLANK, { message: 'id is required' }) id!: string;
}

export class PinDto {
  @IsDefined({ message: 'id is required' }) @IsString() @MaxLength(200) @Matches(NOT_BLANK, { message: 'id is required' }) id!: string;
  @IsOptional() @IsBoolean() pin?: boolean;
  /** Days: 1, 7 or 30; anything else (or absent) gives 30. */
  @IsOptional() duration?: unknown;
}

/** At most this many ids per `/message/markread` call. */
export const MARKREAD_MAX_IDS = 100;

export class MarkReadDto {
  @IsDefined({ message: 'id must be a non-empty array of message ids' })
  @IsArray({ message: 'id must be an array of message ids' })
  @ArrayNotEmpty({ message: 'id must be a non-empty array of message ids' })
  @ArrayMaxSize(MARKREAD_MAX_IDS, { message: `id: at most ${MARKREAD_MAX_IDS} message ids per request` })
  @IsString({ each: true, message: 'id must be an array of message ids' })
  @MaxLength(200, { each: true, message: 'id: each message id must be at most 200 characters' })
  id!: string[];
}

export class DownloadDto {
  @IsDefined({ message: 'id is required' }) @IsString() @MaxLength(200) @Matches(NOT_BLANK, { message: 'id is required' }) id!: string;
  @IsOptional() @IsBoolean() return_base64?: boolean;
  @IsOptional() @IsBoolean() generate_mp3?: boolean;
  @IsOptional() @IsBoolean() return_link?: boolean;
  @IsOptional() @IsBoolean() transcribe?: boolean;
  @IsOptional() @IsBoolean() download_quoted?: boolean;
  // Saved on the instance once a transcription worked: the same limit as /instance/updatechatbotsettings'.
  @IsOptional() @IsString() @MaxLength(300) openai_apikey?: string;
}

/** `POST /message/history-sync`: `count` (a number or a numeric string) and `messageid` for `exact` are checked by the service. */
export class HistorySyncDto {
  @IsDefined({ message: 'number is required' })
  @IsString({ message: 'number must be a string' })
  @MaxLength(200)
  @Matches(NOT_BLANK, { message: 'number is required' })
  number!: string;
  @IsOptional()
  @IsString({ message: 'mode must be history or exact' })
  @Matches(/^\s*(history|exact)?\s*$/i, { message: 'mode must be history or exact' })
  mode?: string;
  @IsOptional() @IsString({ message: 'messageid must be a string' }) @MaxLength(200) messageid?: string;
  @IsOptional() count?: unknown;
}
