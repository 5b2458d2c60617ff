import { applyDecorators } from '@nestjs/common';
import { IsBoolean, IsDefined, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/** A Chatwoot id (account, inbox): a positive integer. */
const ChatwootId = (field: string) =>
  applyDecorators(
    IsDefined({ message: `${field} is required` }),
    IsInt({ message: `${field} must be a positive integer` }),
    Min(1, { message: `${field} must be a positive integer` }),
    Max(Number.MAX_SAFE_INTEGER, { message: `${field} must be a positive integer` }),
  );

/** `PUT /chatwoot/config`: the reference's fields; enabled, url, access_token, account_id and inbox_id are required. */
export class ChatwootConfigDto {
  @IsDefined({ message: 'enabled is required' })
  @IsBoolean({ message: 'enabled must be a boolean' })
  @JSONSchema({ description: 'The integration is on' })
  enabled!: boolean;

  /** Base URL of the Chatwoot installation (a trailing slash is dropped). */
  @IsDefined({ message: 'url is required' })
  @IsString({ message: 'url must be a string' })
  @MaxLength(2000, { message: 'url must be at most 2000 characters' })
  @Matches(/^https?:\/\/[^\s/?#]+[^\s]*$/i, { message: 'url must be an http(s) URL' })
  @JSONSchema({ description: 'The base URL of the Chatwoot installation (a trailing slash is dropped)' })
  url!: string;

  /** The user's or agent bot's access token (Profile Settings > Access Token). */
  @IsDefined({ message: 'access_token is required' })
  @IsString({ message: 'access_token must be a string' })
  @MinLength(1, { message: 'access_token is required' })
  @MaxLength(500, { message: 'access_token must be at most 500 characters' })
  @Matches(/^[\x21-\x7e]+$/, { message: 'access_token must be printable characters without spaces' })
  @JSONSchema({ description: "The Chatwoot user's or agent bot's API access token (Profile Settings > Access Token)" })
  access_token!: string;

  @ChatwootId('account_id')
  @JSONSchema({ description: "The Chatwoot account id (seen in the account's URL)" })
  account_id!: number;

  @ChatwootId('inbox_id')
  @JSONSchema({ description: "The Chatwoot inbox id (in the inbox's settings)" })
  inbox_id!: number;

  @IsOptional()
  @IsBoolean({ message: 'ignore_groups must be a boolean' })
  @JSONSchema({ description: 'Leave WhatsApp groups out of the sync' })
  ignore_groups?: boolean;

  @IsOptional()
  @IsBoolean({ message: 'sign_messages must be a boolean' })
  @JSONSchema({ description: "Sign the messages sent to WhatsApp with the agent's name" })
  sign_messages?: boolean;

  @IsOptional()
  @IsBoolean({ message: 'create_new_conversation must be a boolean' })
  @JSONSchema({ description: 'Always open a new conversation instead of reusing the open one' })
  create_new_conversation?: boolean;
}
