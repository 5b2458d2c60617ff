import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

export class CreateInstanceDto {
  @IsString()
  @IsNotEmpty({ message: 'name is required' })
  @MaxLength(100)
  @JSONSchema({ description: "The instance's name (need not be unique)" })
  name!: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  @JSONSchema({ description: "Free metadata for the operator (e.g. a customer id); the instance's owner sees it and cannot change it" })
  adminField01?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  @JSONSchema({ description: 'A second free metadata field for the operator' })
  adminField02?: string;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  @JSONSchema({ description: 'The system name the phone shows among its linked devices' })
  systemName?: string;
}

export class UpdateAdminFieldsDto {
  @IsString()
  @IsNotEmpty({ message: 'id is required' })
  @JSONSchema({ description: "The instance's id" })
  id!: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  @JSONSchema({ description: 'Admin field 1: free metadata for the operator' })
  adminField01?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  @JSONSchema({ description: 'Admin field 2: free metadata for the operator' })
  adminField02?: string;
}
