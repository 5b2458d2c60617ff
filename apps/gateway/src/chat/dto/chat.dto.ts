import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsOptional, IsString, MaxLength } from 'class-validator';

export class BlockDto {
  @IsDefined({ message: 'number is required' }) @IsString({ message: 'number must be a string' }) @MaxLength(200) number!: string;
  @IsDefined({ message: 'block is required' }) @IsBoolean({ message: 'block must be a boolean' }) block!: boolean;
}

/** Exactly one of `labelids` (the chat's whole set), `add_labelid`, `remove_labelid` (checked by the service). */
export class ChatLabelsDto {
  @IsDefined({ message: 'number is required' }) @IsString({ message: 'number must be a string' }) @MaxLength(200) number!: string;
  @IsOptional()
  @IsArray({ message: 'labelids must be an array of label ids' })
  @ArrayMaxSize(100)
  @IsString({ each: true, message: 'labelids must be an array of label ids' })
  labelids?: string[];
  @IsOptional() @IsString({ message: 'add_labelid must be a string' }) @MaxLength(64) add_labelid?: string;
  @IsOptional() @IsString({ message: 'remove_labelid must be a string' }) @MaxLength(64) remove_labelid?: string;
}
