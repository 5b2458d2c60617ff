/** `/profile/name`: the instance's own push name (app state `setting_pushName`, as WhatsApp's apps set it). */
export interface ProfileNameRequest {
  instanceId: string;
  name: string;
}

/** `/profile/image`: the instance's own profile picture from a URL or a staged upload, or `remove`. */
export interface ProfileImageRequest {
  instanceId: string;
  picture: { url: string } | { fileId: string } | { remove: true };
}

/** The picture as WhatsApp serves it now ('' once removed, or when WhatsApp does not say). */
export interface ProfileImageReply {
  removed: boolean;
  url: string;
}
