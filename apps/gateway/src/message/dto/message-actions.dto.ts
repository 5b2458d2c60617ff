import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsBoolean, IsDefined, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/** Something other than blanks. */
const NOT_BLANK = /\S/;

export class ReactDto {
  @JSONSchema({ description: 'The chat of the message (optional: the message id finds it)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  number?: string;
  /** An emoji; "" removes the reaction. */
  @JSONSchema({ description: 'The emoji; an empty string removes the reaction' })
  @IsDefined({ message: 'text is required (an emoji, or "" to remove the reaction)' })
  @IsString()
  @MaxLength(64)
  text!: string;
  @JSONSchema({ description: 'The id of the message to react to' })
  @IsDefined({ message: 'id is required' })
  @IsString()
  @MaxLength(200)
  @Matches(NOT_BLANK, { message: 'id is required' })
  id!: string;
}

export class EditDto {
  @JSONSchema({ description: "The message's new text" })
  @IsDefined({ message: 'text is required' })
  @IsString()
  @MaxLength(65_536)
  @Matches(NOT_BLANK, { message: 'text is required' })
  text!: string;
  @JSONSchema({ description: 'The id of the message to edit (`owner:messageid` or the message id alone)' })
  @IsDefined({ message: 'id is required' })
  @IsString()
  @MaxLength(200)
  @Matches(NOT_BLANK, { message: 'id is required' })
  id!: string;
}

export class DeleteDto {
  @JSONSchema({ description: 'The id of the message to delete for everyone (`owner:messageid` or the message id alone)' })
  @IsDefined({ message: 'id is required' })
  @IsString()
  @MaxLength(200)
  @Matches(NOT_BLANK, { message: 'id is required' })
  id!: string;
}

export class PinDto {
  @JSONSchema({ description: 'The id of the message (`owner:messageid` or the message id alone)' })
  @IsDefined({ message: 'id is required' })
  @IsString()
  @MaxLength(200)
  @Matches(NOT_BLANK, { message: 'id is required' })
  id!: string;
  @JSONSchema({ description: 'Pin (true, the default) or unpin (false)' })
  @IsOptional()
  @IsBoolean()
  pin?: boolean;
  /** Days: 1, 7 or 30; anything else (or absent) gives 30. */
  @JSONSchema({ description: 'How many days the pin lasts: 1, 7 or 30 (any other value gives 30)', example: 7 })
  @IsOptional()
  duration?: unknown;
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
  @JSONSchema({ description: 'The ids of the messages to mark read (at most 100)' })
  id!: string[];
}

export class DownloadDto {
  @JSONSchema({ description: 'The id of the message holding the file' })
  @IsDefined({ message: 'id is required' })
  @IsString()
  @MaxLength(200)
  @Matches(NOT_BLANK, { message: 'id is required' })
  id!: string;
  @JSONSchema({ description: "Answer the file's content as base64" })
  @IsOptional()
  @IsBoolean()
  return_base64?: boolean;
  @JSONSchema({ description: 'For audio: MP3 (true, the default) or the original OGG (false)' })
  @IsOptional()
  @IsBoolean()
  generate_mp3?: boolean;
  @JSONSchema({
    description:
      "Answer a link to the file in `fileURL` (the default; false leaves it empty): this gateway's `/files/{id}`, or a signed link when files are kept in S3",
  })
  @IsOptional()
  @IsBoolean()
  return_link?: boolean;
  @JSONSchema({ description: 'Transcribe an audio to text (needs an OpenAI key)' })
  @IsOptional()
  @IsBoolean()
  transcribe?: boolean;
  @JSONSchema({ description: 'Download the media of the message quoted by this one instead' })
  @IsOptional()
  @IsBoolean()
  download_quoted?: boolean;
  // Saved on the instance once a transcription worked: the same limit as /instance/updatechatbotsettings'.
  @JSONSchema({ description: 'The OpenAI key for the transcription; saved on the instance once it worked' })
  @IsOptional()
  @IsString()
  @MaxLength(300)
  openai_apikey?: string;
}

/** `POST /message/history-sync`: `count` (a number or a numeric string) and `messageid` for `exact` are checked by the service. */
export class HistorySyncDto {
  @IsDefined({ message: 'number is required' })
  @IsString({ message: 'number must be a string' })
  @MaxLength(200)
  @Matches(NOT_BLANK, { message: 'number is required' })
  @JSONSchema({ description: "The chat's JID (required in both modes: it keeps the search to that chat)" })
  number!: string;
  @IsOptional()
  @IsString({ message: 'mode must be history or exact' })
  @Matches(/^\s*(history|exact)?\s*$/i, { message: 'mode must be history or exact' })
  @JSONSchema({ description: '`history` (the default): older messages before an anchor; `exact`: reload the message `messageid`' })
  mode?: string;
  @JSONSchema({ description: 'In `history` mode, the anchor message to go back from (the oldest stored when absent); in `exact` mode, the message to reload' })
  @IsOptional()
  @IsString({ message: 'messageid must be a string' })
  @MaxLength(200)
  messageid?: string;
  @JSONSchema({ description: 'How many messages to ask for in `history` mode (ignored in `exact`)', example: 50 })
  @IsOptional()
  count?: unknown;
}
