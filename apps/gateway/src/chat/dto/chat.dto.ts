import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsOptional, IsString, MaxLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

export class BlockDto {
  @JSONSchema({ description: 'The contact, a phone number in international format (e.g. 5511999999999)' })
  @IsDefined({ message: 'number is required' })
  @IsString({ message: 'number must be a string' })
  @MaxLength(200)
  number!: string;
  @JSONSchema({ description: 'Block (true) or unblock (false)' })
  @IsDefined({ message: 'block is required' })
  @IsBoolean({ message: 'block must be a boolean' })
  block!: boolean;
}

/** Exactly one of `labelids` (the chat's whole set), `add_labelid`, `remove_labelid` (checked by the service). */
export class ChatLabelsDto {
  @JSONSchema({ description: 'The chat: a phone number in international format, or a user or group JID' })
  @IsDefined({ message: 'number is required' })
  @IsString({ message: 'number must be a string' })
  @MaxLength(200)
  number!: string;
  @IsOptional()
  @IsArray({ message: 'labelids must be an array of label ids' })
  @ArrayMaxSize(100)
  @IsString({ each: true, message: 'labelids must be an array of label ids' })
  @JSONSchema({ description: 'Set exactly these labels on the chat (the others are removed)' })
  labelids?: string[];
  @JSONSchema({ description: 'Add this label to the chat' })
  @IsOptional()
  @IsString({ message: 'add_labelid must be a string' })
  @MaxLength(64)
  add_labelid?: string;
  @JSONSchema({ description: 'Remove this label from the chat' })
  @IsOptional()
  @IsString({ message: 'remove_labelid must be a string' })
  @MaxLength(64)
  remove_labelid?: string;
}
