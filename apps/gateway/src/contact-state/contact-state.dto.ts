import { IsBoolean, IsDefined, IsOptional, IsString, MaxLength } from 'class-validator';

export class RefreshLabelsDto {
  @IsOptional() @IsBoolean({ message: 'force must be a boolean' }) force?: boolean;
}

export class BlockDto {
  @IsDefined({ message: 'number is required' }) @IsString({ message: 'number must be a string' }) @MaxLength(200) number!: string;
  @IsDefined({ message: 'block is required' }) @IsBoolean({ message: 'block must be a boolean' }) block!: boolean;
}
