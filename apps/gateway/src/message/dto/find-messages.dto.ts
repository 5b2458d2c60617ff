import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/** The largest offset (and page) taken: far beyond any stored history, and well inside Postgres' bigint. */
export const MAX_OFFSET = 1_000_000_000;

export class FindMessagesDto {
  @JSONSchema({ description: 'One message by its id (exact)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  id?: string;
  @JSONSchema({ description: "Only this chat's messages (its JID, e.g. `5511999999999@s.whatsapp.net`)" })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  chatid?: string;
  @JSONSchema({ description: 'Only messages sent with this `track_source`' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  track_source?: string;
  @JSONSchema({ description: 'Only messages sent with this `track_id`' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  track_id?: string;
  @JSONSchema({ description: 'Only messages in this status (e.g. `Sent`, `Delivered`, `Read`, `Failed`)' })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  status?: string;
  @JSONSchema({ description: 'Only messages sent by the account (true) or received (false)' })
  @IsOptional()
  @IsBoolean()
  fromMe?: boolean;
  @JSONSchema({ description: 'Only messages of this type (e.g. `Conversation`, `ImageMessage`)' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  messageType?: string;

  @IsOptional()
  @IsIn(['messageTimestamp', '-messageTimestamp'], { message: 'sort must be messageTimestamp or -messageTimestamp' })
  @JSONSchema({ description: '`-messageTimestamp` (newest first, the default) or `messageTimestamp`' })
  sort?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  @JSONSchema({ description: 'At most this many messages (1 to 1000; 100 by default)' })
  limit?: number;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_OFFSET)
  @JSONSchema({ description: 'Skip this many (0, the default, starts with the newest)' })
  offset?: number;

  /** The older paging: page (from 1) and pageSize. */
  @JSONSchema({ description: 'Older paging: the page, from 1 (with `pageSize`)' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_OFFSET)
  page?: number;
  @JSONSchema({ description: 'Older paging: messages per page' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  pageSize?: number;

  /** Some clients name the chat `number`. */
  @JSONSchema({ description: 'The chat under another name, used when `chatid` is absent' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  number?: string;
}
