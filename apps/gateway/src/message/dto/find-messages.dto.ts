import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** The largest offset (and page) taken: far beyond any stored history, and well inside Postgres' bigint. */
export const MAX_OFFSET = 1_000_000_000;

export class FindMessagesDto {
  @IsOptional() @IsString() @MaxLength(200) id?: string;
  @IsOptional() @IsString() @MaxLength(200) chatid?: string;
  @IsOptional() @IsString() @MaxLength(200) track_source?: string;
  @IsOptional() @IsString() @MaxLength(200) track_id?: string;
  @IsOptional() @IsString() @MaxLength(40) status?: string;
  @IsOptional() @IsBoolean() fromMe?: boolean;
  @IsOptional() @IsString() @MaxLength(100) messageType?: string;

  @IsOptional()
  @IsIn(['messageTimestamp', '-messageTimestamp'], { message: 'sort must be messageTimestamp or -messageTimestamp' })
  sort?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_OFFSET)
  offset?: number;

  /** The older paging: page (from 1) and pageSize. */
  @IsOptional() @IsInt() @Min(1) @Max(MAX_OFFSET) page?: number;
  @IsOptional() @IsInt() @Min(1) @Max(1000) pageSize?: number;

  /** Some clients name the chat `number`. */
  @IsOptional() @IsString() @MaxLength(200) number?: string;
}
