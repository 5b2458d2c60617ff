import { IsDefined, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/** A passphrase shorter than this protects nothing once the bundle leaks: the bundle holds the account. */
export const MIN_PASSPHRASE = 12;

export class ExportSessionDto {
  @IsDefined({ message: 'passphrase is required' })
  @IsString()
  @MinLength(MIN_PASSPHRASE, { message: `passphrase must have at least ${MIN_PASSPHRASE} characters` })
  @MaxLength(1024)
  @JSONSchema({
    description: `The passphrase the bundle is encrypted with (at least ${MIN_PASSPHRASE} characters; a few random words are best). It is not stored: without it the bundle cannot be imported`,
  })
  passphrase!: string;
}

export class ImportSessionDto {
  @IsDefined({ message: 'bundle is required' })
  @IsString()
  @MinLength(1, { message: 'bundle is required' })
  @JSONSchema({ description: 'The `bundle` that `POST /instance/export` answered on the other server, as it was (`gwsession1.…`)' })
  bundle!: string;

  @IsDefined({ message: 'passphrase is required' })
  @IsString()
  @MinLength(1, { message: 'passphrase is required' })
  @MaxLength(1024)
  @JSONSchema({ description: 'The passphrase the bundle was exported with' })
  passphrase!: string;

  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @JSONSchema({ description: "A name for the new instance; default: the exported instance's name" })
  name?: string;
}
