import { IsBoolean, IsDefined, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

export class RefreshLabelsDto {
  @JSONSchema({ description: 'Try false first; true does a heavier, complete reread of the labels' })
  @IsOptional()
  @IsBoolean({ message: 'force must be a boolean' })
  force?: boolean;
}

/** `labelid` is a label id of GET /labels, or "new" to create one. */
export class EditLabelDto {
  @IsDefined({ message: 'labelid is required' })
  @IsString({ message: 'labelid must be a string' })
  @Matches(/^(new|[\w.-]{1,64})$/, { message: 'labelid must be "new" or a label id' })
  @JSONSchema({ description: "The label's id to edit or delete, or `new` to create one" })
  labelid!: string;
  @JSONSchema({ description: "The label's name" })
  @IsOptional()
  @IsString({ message: 'name must be a string' })
  @MaxLength(100)
  name?: string;
  @IsOptional()
  @IsInt({ message: 'color must be an integer from 0 to 19' })
  @Min(0, { message: 'color must be an integer from 0 to 19' })
  @Max(19, { message: 'color must be an integer from 0 to 19' })
  @JSONSchema({ description: "The label's colour, 0 to 19" })
  color?: number;
  @JSONSchema({ description: 'Delete the label' })
  @IsOptional()
  @IsBoolean({ message: 'delete must be a boolean' })
  delete?: boolean;
}
