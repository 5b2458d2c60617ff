import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export class RefreshLabelsDto {
  @IsOptional() @IsBoolean({ message: 'force must be a boolean' }) force?: boolean;
}

export class BlockDto {
  @IsDefined({ message: 'number is required' }) @IsString({ message: 'number must be a string' }) @MaxLength(200) number!: string;
  @IsDefined({ message: 'block is required' }) @IsBoolean({ message: 'block must be a boolean' }) block!: boolean;
}

/** `labelid` is a label id of GET /labels, or "new" to create one. */
export class EditLabelDto {
  @IsDefined({ message: 'labelid is required' })
  @IsString({ message: 'labelid must be a string' })
  @Matches(/^(new|[\w.-]{1,64})$/, { message: 'labelid must be "new" or a label id' })
  labelid!: string;
  @IsOptional() @IsString({ message: 'name must be a string' }) @MaxLength(100) name?: string;
  @IsOptional()
  @IsInt({ message: 'color must be an integer from 0 to 19' })
  @Min(0, { message: 'color must be an integer from 0 to 19' })
  @Max(19, { message: 'color must be an integer from 0 to 19' })
  color?: number;
  @IsOptional() @IsBoolean({ message: 'delete must be a boolean' }) delete?: boolean;
}

/** Exactly one of `labelids` (the chat's whole set), `add_labelid`, `remove_labelid`. */
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
