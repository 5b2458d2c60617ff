import { Body, Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { InstanceEntity } from '@gw/persistence';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
import { SCHEMAS } from '../openapi/schemas';
import {
  CreateNewsletterDto,
  NewsletterDescriptionDto,
  NewsletterIdDto,
  NewsletterLinkDto,
  NewsletterMessagesDto,
  NewsletterUpdatesDto,
  NewsletterNameDto,
  NewsletterOwnerDto,
  NewsletterPhoneDto,
  NewsletterPictureDto,
  NewsletterPostDto,
  NewsletterPostEditDto,
  NewsletterReactionDto,
  NewsletterSearchDto,
  NewsletterSettingsDto,
  NewsletterViewedDto,
} from './dto/newsletter.dto';
import { NEWSLETTER_EXAMPLE, NEWSLETTER_POST_EXAMPLE, POST_CHANGE_EXAMPLE } from './newsletter.examples';
import { NewsletterService } from './newsletter.service';

const DONE = { example: { response: true } };

/** Channels (newsletters) the instance creates, follows and runs: `/newsletter/*`. */
@Controller('newsletter')
@UseGuards(InstanceGuard)
export class NewsletterController {
  constructor(private readonly newsletters: NewsletterService) {}

  @Post('create')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterResponse, { example: { response: NEWSLETTER_EXAMPLE } })
  create(@CurrentInstance() instance: InstanceEntity, @Body() dto: CreateNewsletterDto) {
    return this.newsletters.create(instance, dto);
  }

  @Get('list')
  @ApiReply(SCHEMAS.NewsletterList, { example: { response: [{ ...NEWSLETTER_EXAMPLE, viewer_metadata: { mute: 'off', role: 'subscriber' } }] } })
  list(@CurrentInstance() instance: InstanceEntity) {
    return this.newsletters.list(instance);
  }

  @Post('info')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterResponse, { example: { response: NEWSLETTER_EXAMPLE } })
  info(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterIdDto) {
    return this.newsletters.info(instance, dto);
  }

  @Post('link')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterResponse, { example: { response: { ...NEWSLETTER_EXAMPLE, viewer_metadata: { mute: 'off', role: 'guest' } } } })
  link(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterLinkDto) {
    return this.newsletters.link(instance, dto);
  }

  @Post('messages')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterMessages, { example: { response: [NEWSLETTER_POST_EXAMPLE] } })
  messages(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterMessagesDto) {
    return this.newsletters.messages(instance, dto);
  }

  @Post('updates')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    deprecated: true,
    description: 'WhatsApp no longer answers it: always 504 after checking the body. Views and reactions come with /newsletter/messages.',
  })
  @ApiReply(SCHEMAS.NewsletterMessages, {
    description: 'Never answered since WhatsApp stopped answering (504); the reference shape',
    example: { response: [NEWSLETTER_POST_EXAMPLE] },
  })
  updates(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterUpdatesDto) {
    return this.newsletters.updates(instance, dto);
  }

  @Post('follow')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  follow(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterIdDto) {
    return this.newsletters.subscription(instance, dto, 'follow');
  }

  @Post('unfollow')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  unfollow(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterIdDto) {
    return this.newsletters.subscription(instance, dto, 'unfollow');
  }

  @Post('mute')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  mute(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterIdDto) {
    return this.newsletters.subscription(instance, dto, 'mute');
  }

  @Post('unmute')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  unmute(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterIdDto) {
    return this.newsletters.subscription(instance, dto, 'unmute');
  }

  @Post('name')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  updateName(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterNameDto) {
    return this.newsletters.updateName(instance, dto);
  }

  @Post('description')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  updateDescription(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterDescriptionDto) {
    return this.newsletters.updateDescription(instance, dto);
  }

  @Post('delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  delete(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterIdDto) {
    return this.newsletters.delete(instance, dto);
  }

  @Post('subscribe')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterLive, { example: { response: '5m0s' } })
  subscribe(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterIdDto) {
    return this.newsletters.subscribe(instance, dto);
  }

  @Post('messages/edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterPostChange, { example: { response: POST_CHANGE_EXAMPLE } })
  editPost(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterPostEditDto) {
    return this.newsletters.editPost(instance, dto);
  }

  @Post('messages/delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterPostChange, { example: { response: POST_CHANGE_EXAMPLE } })
  deletePost(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterPostDto) {
    return this.newsletters.deletePost(instance, dto);
  }

  @Post('viewed')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  viewed(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterViewedDto) {
    return this.newsletters.viewed(instance, dto);
  }

  @Post('reaction')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  react(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterReactionDto) {
    return this.newsletters.react(instance, dto);
  }

  @Post('picture')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  picture(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterPictureDto) {
    return this.newsletters.picture(instance, dto);
  }

  @Post('settings')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  settings(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterSettingsDto) {
    return this.newsletters.settings(instance, dto);
  }

  @Post('search')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterSearch, { example: { response: { after: 'YXJyYXljb25uZWN0aW9uOjIw', data: [NEWSLETTER_EXAMPLE] } } })
  search(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterSearchDto) {
    return this.newsletters.search(instance, dto);
  }

  @Post('admin/invite')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  inviteAdmin(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterPhoneDto) {
    return this.newsletters.admin(instance, dto, 'invite');
  }

  @Post('admin/accept')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  acceptAdmin(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterIdDto) {
    return this.newsletters.acceptAdmin(instance, dto);
  }

  @Post('admin/remove')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  removeAdmin(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterPhoneDto) {
    return this.newsletters.admin(instance, dto, 'remove');
  }

  @Post('admin/revoke')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  revokeAdmin(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterPhoneDto) {
    return this.newsletters.admin(instance, dto, 'revoke');
  }

  @Post('owner/transfer')
  @HttpCode(HttpStatus.OK)
  @ApiReply(SCHEMAS.NewsletterDone, DONE)
  transferOwner(@CurrentInstance() instance: InstanceEntity, @Body() dto: NewsletterOwnerDto) {
    return this.newsletters.transferOwner(instance, dto);
  }
}
