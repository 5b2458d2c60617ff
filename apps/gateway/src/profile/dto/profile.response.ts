import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** The push name WhatsApp took. */
@ApiSchema({ name: 'ProfileNameChange', description: 'The profile name as WhatsApp took it' })
export class ProfileNameChange {
  @ApiProperty({ description: 'The new push name, trimmed', example: 'Minha Empresa - Atendimento' })
  name!: string;
  @ApiProperty({ type: 'integer', description: 'When it changed (Unix seconds)', example: 1704067200 })
  updated_at!: number;
}

/** `POST /profile/name`. */
@ApiSchema({ name: 'ProfileNameUpdated', description: 'The push name WhatsApp took, and when' })
export class ProfileNameUpdatedResponse {
  @ApiProperty({ description: 'Always true: WhatsApp took the name' })
  success!: boolean;
  @ApiProperty({ enum: ['Profile name updated successfully'], description: 'What was done, in words' })
  message!: 'Profile name updated successfully';
  @ApiProperty({ type: () => ProfileNameChange, description: 'The name now' })
  profile!: ProfileNameChange;
}

/** What became of the picture. */
@ApiSchema({ name: 'ProfileImageChange', description: 'What became of the profile picture' })
export class ProfileImageChange {
  @ApiProperty({ description: 'A new picture was set' })
  image_updated!: boolean;
  @ApiProperty({ description: 'The picture was removed (`image: "remove"` or `"delete"`)' })
  image_removed!: boolean;
  @ApiProperty({ type: 'integer', description: 'When it changed (Unix seconds)', example: 1704067200 })
  updated_at!: number;
}

/** `POST /profile/image`. */
@ApiSchema({ name: 'ProfileImageUpdated', description: 'Whether the picture was set or removed, and when' })
export class ProfileImageUpdatedResponse {
  @ApiProperty({ description: 'Always true: WhatsApp took the change' })
  success!: boolean;
  @ApiProperty({ enum: ['Profile image updated successfully', 'Profile image removed successfully'], description: 'What was done, in words' })
  message!: 'Profile image updated successfully' | 'Profile image removed successfully';
  @ApiProperty({ type: () => ProfileImageChange, description: 'What became of the picture' })
  profile!: ProfileImageChange;
}
