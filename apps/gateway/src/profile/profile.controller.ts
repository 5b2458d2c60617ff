import { Body, Controller, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { ProfileImageDto, ProfileNameDto } from './dto/profile.dto';
import { PROFILE_IMAGE_UPDATED_EXAMPLE, PROFILE_NAME_UPDATED_EXAMPLE } from './dto/profile.examples';
import { ProfileImageUpdatedResponse, ProfileNameUpdatedResponse } from './dto/profile.response';
import { ProfileService } from './profile.service';
import { ApiArea } from '../openapi/api-areas';
import { ApiOperation } from '@nestjs/swagger';
import type { RequestInstance } from '../common/request-instance';

/** `/profile/*`: the instance's own push name and picture. */
@ApiArea('Profile')
@Controller('profile')
@UseGuards(InstanceGuard)
export class ProfileController {
  constructor(private readonly profiles: ProfileService) {}

  @Post('name')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ProfileNameUpdatedResponse, { example: PROFILE_NAME_UPDATED_EXAMPLE })
  @ApiOperation({
    summary: 'Change the profile name',
    description: "Changes the connected account's display name (push name), seen by every contact; WhatsApp may limit how often.",
  })
  name(@CurrentInstance() instance: RequestInstance, @Body() dto: ProfileNameDto): Promise<ProfileNameUpdatedResponse> {
    return this.profiles.updateName(instance, dto);
  }

  @Post('image')
  @HttpCode(HttpStatus.OK)
  @ApiReply(ProfileImageUpdatedResponse, { example: PROFILE_IMAGE_UPDATED_EXAMPLE })
  @ApiOperation({
    summary: 'Change the profile picture',
    description: 'Sets the connected account\'s profile picture from a URL or base64, or removes it with `image: "remove"` (or `"delete"`).',
  })
  image(@CurrentInstance() instance: RequestInstance, @Body() dto: ProfileImageDto): Promise<ProfileImageUpdatedResponse> {
    return this.profiles.updateImage(instance, dto);
  }
}
