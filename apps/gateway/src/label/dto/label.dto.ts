import { IsBoolean, IsDefined, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export class RefreshLabelsDto {
  @IsOptional() @IsBoolean({ message: 'force must be a boolean' }) force?: boolean;
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
