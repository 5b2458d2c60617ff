import { IsDefined, IsString, MaxLength, MinLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';

/** WhatsApp's limit on a push name. */
export const MAX_PROFILE_NAME = 25;

/** `POST /profile/name`: the push name every contact sees from now on. */
export class ProfileNameDto {
  @IsDefined({ message: 'name is required' })
  @IsString({ message: 'name must be a string' })
  @MinLength(1, { message: 'name must not be empty' })
  @MaxLength(MAX_PROFILE_NAME, { message: `name must be at most ${MAX_PROFILE_NAME} characters` })
  @JSONSchema({ description: "The account's new display name" })
  name!: string;
}

/** `POST /profile/image`: an http(s) URL, base64 or a data URI of a picture, or `remove` / `delete`. */
export class ProfileImageDto {
  @IsDefined({ message: 'image is required' })
  @IsString({ message: 'image must be a string' })
  @JSONSchema({ description: 'The picture: a URL or base64, or `remove` / `delete` to remove it' })
  image!: string;
}
