import { Body, Controller, Get, HttpCode, HttpStatus, Post, UseGuards } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';

import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { ApiReply } from '../openapi/api-reply.decorator';
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
import {
  NEWSLETTER_DONE_EXAMPLE,
  NEWSLETTER_LINKED_EXAMPLE,
  NEWSLETTER_LIST_EXAMPLE,
  NEWSLETTER_LIVE_EXAMPLE,
  NEWSLETTER_MESSAGES_EXAMPLE,
  NEWSLETTER_POST_CHANGE_EXAMPLE,
  NEWSLETTER_SEARCH_EXAMPLE,
  NEWSLETTER_WRAPPED_EXAMPLE,
} from './dto/newsletter.examples';
import {
  NewsletterDoneResponse,
  NewsletterListResponse,
  NewsletterLiveResponse,
  NewsletterMessagesResponse,
  NewsletterPostChangeResponse,
  NewsletterSearchResponse,
  NewsletterWrappedResponse,
} from './dto/newsletter.response';
import { NewsletterService } from './newsletter.service';
import { ApiArea } from '../openapi/api-areas';
import type { RequestInstance } from '../common/request-instance';

const DONE = { example: NEWSLETTER_DONE_EXAMPLE };

/** Channels (newsletters) the instance creates, follows and runs: `/newsletter/*`. */
@ApiArea('Channels')
@Controller('newsletter')
@UseGuards(InstanceGuard)
export class NewsletterController {
  constructor(private readonly newsletters: NewsletterService) {}

  @Post('create')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterWrappedResponse, { example: NEWSLETTER_WRAPPED_EXAMPLE })
  @ApiOperation({
    summary: 'Create a channel',
    description: 'Creates a WhatsApp channel (newsletter): `name` required, `description` and `picture` (URL, base64 or data URI, at most 1 MB) optional.',
  })
  create(@CurrentInstance() instance: RequestInstance, @Body() dto: CreateNewsletterDto): Promise<NewsletterWrappedResponse> {
    return this.newsletters.create(instance, dto);
  }

  @Get('list')
  @ApiReply(NewsletterListResponse, { example: NEWSLETTER_LIST_EXAMPLE })
  @ApiOperation({ summary: 'List the followed channels', description: 'The channels the connected account follows.' })
  list(@CurrentInstance() instance: RequestInstance): Promise<NewsletterListResponse> {
    return this.newsletters.list(instance);
  }

  @Post('info')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterWrappedResponse, { example: NEWSLETTER_WRAPPED_EXAMPLE })
  @ApiOperation({ summary: "Get a channel's details", description: "A channel's details, by its numeric `id` or its `jid`." })
  info(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterIdDto): Promise<NewsletterWrappedResponse> {
    return this.newsletters.info(instance, dto);
  }

  @Post('link')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterWrappedResponse, { example: NEWSLETTER_LINKED_EXAMPLE })
  @ApiOperation({ summary: 'Find a channel by its invite key', description: "A channel's details from the key of its invite link." })
  link(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterLinkDto): Promise<NewsletterWrappedResponse> {
    return this.newsletters.link(instance, dto);
  }

  @Post('messages')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterMessagesResponse, { example: NEWSLETTER_MESSAGES_EXAMPLE })
  @ApiOperation({
    summary: "Read a channel's posts",
    description:
      "Reads a channel's posts directly from WhatsApp (nothing stored is needed): the latest `count`, older ones with `beforeid`; with their views and reactions.",
  })
  messages(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterMessagesDto): Promise<NewsletterMessagesResponse> {
    return this.newsletters.messages(instance, dto);
  }

  @Post('updates')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: "Read the updates of a channel's posts (no longer answered)",
    deprecated: true,
    description: 'WhatsApp no longer answers it: always 504 after checking the body. Views and reactions come with /newsletter/messages.',
  })
  @ApiReply(NewsletterMessagesResponse, {
    description: 'Never answered since WhatsApp stopped answering (504); the reference shape',
    example: NEWSLETTER_MESSAGES_EXAMPLE,
  })
  updates(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterUpdatesDto): never {
    return this.newsletters.updates(instance, dto);
  }

  @Post('follow')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Follow a channel', description: 'The account follows the channel.' })
  follow(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterIdDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.subscription(instance, dto, 'follow');
  }

  @Post('unfollow')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Unfollow a channel', description: 'The account stops following the channel.' })
  unfollow(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterIdDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.subscription(instance, dto, 'unfollow');
  }

  @Post('mute')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Mute a channel', description: "Mutes the channel's notifications." })
  mute(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterIdDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.subscription(instance, dto, 'mute');
  }

  @Post('unmute')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Unmute a channel', description: "Turns the channel's notifications on again." })
  unmute(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterIdDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.subscription(instance, dto, 'unmute');
  }

  @Post('name')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Rename a channel', description: "Changes the channel's name." })
  updateName(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterNameDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.updateName(instance, dto);
  }

  @Post('description')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: "Change a channel's description", description: "Changes the channel's description." })
  updateDescription(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterDescriptionDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.updateDescription(instance, dto);
  }

  @Post('delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Delete a channel', description: 'Deletes a channel the account owns.' })
  delete(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterIdDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.delete(instance, dto);
  }

  @Post('subscribe')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterLiveResponse, { example: NEWSLETTER_LIVE_EXAMPLE })
  @ApiOperation({
    summary: "Subscribe to a channel's live updates",
    description: "Subscribes for a while to WhatsApp's live updates of a channel and answers how long the subscription lasts; it creates no webhook event.",
  })
  subscribe(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterIdDto): Promise<NewsletterLiveResponse> {
    return this.newsletters.subscribe(instance, dto);
  }

  @Post('messages/edit')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterPostChangeResponse, { example: NEWSLETTER_POST_CHANGE_EXAMPLE })
  @ApiOperation({
    summary: 'Edit a recent channel post',
    description:
      'Edits a recent post of the channel directly on WhatsApp, found by `messageid` or `serverid` among the latest posts; text, image, video and document posts only.',
  })
  editPost(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterPostEditDto): Promise<NewsletterPostChangeResponse> {
    return this.newsletters.editPost(instance, dto);
  }

  @Post('messages/delete')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterPostChangeResponse, { example: NEWSLETTER_POST_CHANGE_EXAMPLE })
  @ApiOperation({
    summary: 'Delete a recent channel post',
    description: 'Revokes a recent post of the channel directly on WhatsApp, found by `messageid` or `serverid` among the latest posts.',
  })
  deletePost(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterPostDto): Promise<NewsletterPostChangeResponse> {
    return this.newsletters.deletePost(instance, dto);
  }

  @Post('viewed')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Mark channel posts viewed', description: 'Marks the posts `serverids` of the channel as viewed.' })
  viewed(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterViewedDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.viewed(instance, dto);
  }

  @Post('reaction')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({
    summary: 'React to a channel post',
    description: "Sets, changes or (with an empty `reaction`) removes the account's reaction to the post `serverid`; `reactionmessageid` is optional.",
  })
  react(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterReactionDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.react(instance, dto);
  }

  @Post('picture')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: "Change a channel's picture", description: "Sets the channel's picture from a URL, base64 or data URI (at most 1 MB)." })
  picture(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterPictureDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.picture(instance, dto);
  }

  @Post('settings')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({
    summary: "Change a channel's settings",
    description: 'Sets which reactions the channel accepts (`reactionCodes`: `all`, `basic`, `none` or `blocklist`).',
  })
  settings(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterSettingsDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.settings(instance, dto);
  }

  @Post('search')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterSearchResponse, { example: NEWSLETTER_SEARCH_EXAMPLE })
  @ApiOperation({
    summary: 'Search public channels',
    description: "Searches WhatsApp's directory of public channels, by `searchText`, `countryCodes` and `view`; `after` fetches the next page.",
  })
  search(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterSearchDto): Promise<NewsletterSearchResponse> {
    return this.newsletters.search(instance, dto);
  }

  @Post('admin/invite')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Invite a channel admin', description: 'Invites the `phone` to become an admin of the channel.' })
  inviteAdmin(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterPhoneDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.admin(instance, dto, 'invite');
  }

  @Post('admin/accept')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Accept a channel admin invitation', description: 'Accepts a pending invitation to be an admin of the channel.' })
  acceptAdmin(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterIdDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.acceptAdmin(instance, dto);
  }

  @Post('admin/remove')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Remove a channel admin', description: 'Removes the admin whose `phone` is given from the channel.' })
  removeAdmin(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterPhoneDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.admin(instance, dto, 'remove');
  }

  @Post('admin/revoke')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({ summary: 'Revoke a channel admin invitation', description: 'Cancels the pending admin invitation of the `phone`.' })
  revokeAdmin(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterPhoneDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.admin(instance, dto, 'revoke');
  }

  @Post('owner/transfer')
  @HttpCode(HttpStatus.OK)
  @ApiReply(NewsletterDoneResponse, DONE)
  @ApiOperation({
    summary: "Transfer a channel's ownership",
    description: 'Makes `phone` the owner of the channel; `quitAdmin: true` also drops the former owner from the admins.',
  })
  transferOwner(@CurrentInstance() instance: RequestInstance, @Body() dto: NewsletterOwnerDto): Promise<NewsletterDoneResponse> {
    return this.newsletters.transferOwner(instance, dto);
  }
}
