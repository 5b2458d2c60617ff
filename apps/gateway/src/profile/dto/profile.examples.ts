import type { ProfileImageUpdatedResponse, ProfileNameUpdatedResponse } from './profile.response';

/** The bodies the profile's routes answer, as the OpenAPI document shows them. */
export const PROFILE_NAME_UPDATED_EXAMPLE: ProfileNameUpdatedResponse = {
  success: true,
  message: 'Profile name updated successfully',
  profile: { name: 'Minha Empresa - Atendimento', updated_at: 1704067200 },
};

export const PROFILE_IMAGE_UPDATED_EXAMPLE: ProfileImageUpdatedResponse = {
  success: true,
  message: 'Profile image updated successfully',
  profile: { image_updated: true, image_removed: false, updated_at: 1704067200 },
};
