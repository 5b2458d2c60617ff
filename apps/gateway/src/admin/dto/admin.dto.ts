import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

export class CreateInstanceDto {
  @IsString()
  @IsNotEmpty({ message: 'name is required' })
  @MaxLength(100)
  name!: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  adminField01?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  adminField02?: string;

  @IsOptional()
  @IsString()
  @MaxLength(64)
  systemName?: string;
}

export class UpdateAdminFieldsDto {
  @IsString()
  @IsNotEmpty({ message: 'id is required' })
  id!: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  adminField01?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  adminField02?: string;
}
