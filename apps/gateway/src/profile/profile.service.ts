import { Injectable } from '@nestjs/common';
import { InstanceRepository } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { MAX_GROUP_PICTURE_BYTES, pictureSource } from '../group/group.service';
import { SendContentTools } from '../send/send-content-tools';
import { SessionClient } from '../session/session.client';
import type { ProfileImageDto, ProfileNameDto } from './dto/profile.dto';
import type { ProfileImageUpdatedResponse, ProfileNameUpdatedResponse } from './dto/profile.response';
import type { RequestInstance } from '../common/request-instance';

/** `/profile/*`: the instance's own WhatsApp profile, as its contacts see it. */
@Injectable()
export class ProfileService {
  constructor(
    private readonly sessions: SessionClient,
    private readonly instances: InstanceRepository,
    private readonly tools: SendContentTools,
  ) {}

  /**
   * `POST /profile/name`: the push name (WhatsApp's app state, as the phone sets it); the instance's
   * `profileName` follows.
   */
  async updateName(instance: RequestInstance, dto: ProfileNameDto): Promise<ProfileNameUpdatedResponse> {
    const wanted = dto.name.trim();
    if (!wanted) throw ApiError.badRequest('name must not be empty');
    const { name } = await this.sessions.request(instance.id, 'profile.name', { instanceId: instance.id, name: wanted });
    await this.instances.update(instance.id, { profileName: name });
    return { success: true, message: 'Profile name updated successfully', profile: { name, updated_at: Math.floor(Date.now() / 1000) } };
  }

  /**
   * `POST /profile/image`: a new picture (a URL or base64 of at most 5 MB; WhatsApp gets a 640×640 JPEG
   * of it) or `remove` / `delete`; the instance's `profilePicUrl` follows.
   */
  async updateImage(instance: RequestInstance, dto: ProfileImageDto): Promise<ProfileImageUpdatedResponse> {
    const picture = await pictureSource(this.tools, instance, dto.image, 'image', MAX_GROUP_PICTURE_BYTES);
    const { removed, url } = await this.sessions.request(instance.id, 'profile.image', { instanceId: instance.id, picture });
    await this.instances.update(instance.id, { profilePicUrl: url });
    return {
      success: true,
      message: removed ? 'Profile image removed successfully' : 'Profile image updated successfully',
      profile: { image_updated: !removed, image_removed: removed, updated_at: Math.floor(Date.now() / 1000) },
    };
  }
}
