import { ArrayMaxSize, IsArray, IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';

export class ReactDto {
  @IsOptional() @IsString() @MaxLength(200) number?: string;
  /** An emoji; "" removes the reaction. */
  @IsOptional() @IsString() @MaxLength(64) text?: string;
  @IsOptional() @IsString() @MaxLength(200) id?: string;
}

export class EditDto {
  @IsOptional() @IsString() @MaxLength(200) id?: string;
  @IsOptional() @IsString() @MaxLength(65_536) text?: string;
}

export class DeleteDto {
  @IsOptional() @IsString() @MaxLength(200) id?: string;
}

export class PinDto {
  @IsOptional() @IsString() @MaxLength(200) id?: string;
  @IsOptional() @IsBoolean() pin?: boolean;
  /** Days: 1, 7 or 30; anything else (or absent) gives 30. */
  @IsOptional() duration?: unknown;
}

/** At most this many ids per `/message/markread` call. */
export const MARKREAD_MAX_IDS = 100;

export class MarkReadDto {
  @IsOptional()
  @IsArray({ message: 'id must be an array of message ids' })
  @ArrayMaxSize(MARKREAD_MAX_IDS, { message: `id: at most ${MARKREAD_MAX_IDS} message ids per request` })
  @IsString({ each: true, message: 'id must be an array of message ids' })
  @MaxLength(200, { each: true, message: 'id: each message id must be at most 200 characters' })
  id?: string[];
}

export class DownloadDto {
  @IsOptional() @IsString() @MaxLength(200) id?: string;
  @IsOptional() @IsBoolean() return_base64?: boolean;
  @IsOptional() @IsBoolean() generate_mp3?: boolean;
  @IsOptional() @IsBoolean() return_link?: boolean;
  @IsOptional() @IsBoolean() transcribe?: boolean;
  @IsOptional() @IsBoolean() download_quoted?: boolean;
  @IsOptional() @IsString() openai_apikey?: string;
}

/** `POST /message/history-sync`: numbers are checked by the service, which names each error. */
export class HistorySyncDto {
  @IsOptional() @IsString({ message: 'number must be a string' }) @MaxLength(200) number?: string;
  @IsOptional() @IsString({ message: 'mode must be history or exact' }) mode?: string;
  @IsOptional() @IsString({ message: 'messageid must be a string' }) @MaxLength(200) messageid?: string;
  @IsOptional() count?: unknown;
}
