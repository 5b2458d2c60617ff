import { Injectable } from '@nestjs/common';
import type { InstanceRpc } from '@gw/contracts';
import { parseChatTarget } from '@gw/domain';

import { ApiError } from '../common/api-error';
import { pictureSource, withStagedPicture } from '../group/group.service';
import { SendContentTools } from '../send/send-content-tools';
import { SessionClient } from '../session/session.client';
import { INVALID_NEWSLETTER_ID, NEWSLETTER_ID } from './dto/newsletter.dto';
import type { CreateNewsletterDto, NewsletterDescriptionDto, NewsletterIdDto, NewsletterLinkDto, NewsletterNameDto } from './dto/newsletter.dto';
import type { NewsletterMessagesDto, NewsletterUpdatesDto } from './dto/newsletter.dto';
import type { NewsletterOwnerDto, NewsletterPhoneDto, NewsletterPictureDto, NewsletterPostDto, NewsletterPostEditDto } from './dto/newsletter.dto';
import type { NewsletterReactionDto, NewsletterSearchDto, NewsletterSettingsDto, NewsletterViewedDto } from './dto/newsletter.dto';

import type {
  NewsletterDoneResponse,
  NewsletterListResponse,
  NewsletterLiveResponse,
  NewsletterMessagesResponse,
  NewsletterPostChangeResponse,
  NewsletterSearchResponse,
  NewsletterWrappedResponse,
} from './dto/newsletter.response';
import type { RequestInstance } from '../common/request-instance';

type SubscriptionAction = InstanceRpc['newsletter.subscription']['request']['action'];
type AdminAction = InstanceRpc['newsletter.admin']['request']['action'];

/** The largest channel picture taken (the reference: above 1 MB is refused). */
export const MAX_NEWSLETTER_PICTURE_BYTES = 1024 * 1024;

/** `phone`: a number (any punctuation) or `…@s.whatsapp.net` / `…@lid`; else 400 Invalid phone. */
export function newsletterUserOf(phone: string): string {
  const parsed = parseChatTarget(phone.trim());
  if (!parsed || (parsed.kind !== 'user' && parsed.kind !== 'lid')) throw ApiError.badRequest('Invalid phone');
  return parsed.jid;
}

/** Seconds as a Go duration string (uazapiGO answers time.Duration.String(): 5m0s, 1h0m0s, 45s). */
export function goDuration(seconds: number): string {
  if (seconds <= 0) return '0s';
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  if (hours) return `${hours}h${minutes}m${rest}s`;
  if (minutes) return `${minutes}m${rest}s`;
  return `${rest}s`;
}

/** The channel's JID from `jid` or `id` (digits, `@newsletter` added); 400 when neither names one. */
export function newsletterJidOf(dto: NewsletterIdDto): string {
  const value = (dto.jid ?? dto.id ?? '').trim();
  if (!value) throw ApiError.badRequest('id or jid is required');
  if (!NEWSLETTER_ID.test(value)) throw ApiError.badRequest(INVALID_NEWSLETTER_ID);
  return value.endsWith('@newsletter') ? value : `${value}@newsletter`;
}

const INVITE_LINK = /^(?:https?:\/\/)?(?:www\.)?whatsapp\.com\/channel\/([^/?#\s]+)\/?(?:[?#].*)?$/i;
const INVITE_KEY = /^[A-Za-z0-9_-]{6,64}$/;

/** The invite key of `key`: the key alone or the link https://whatsapp.com/channel/<key>; else 400 `invalid invite key`. */
export function inviteKeyOf(dto: NewsletterLinkDto): string {
  const value = dto.key.trim();
  const key = INVITE_LINK.exec(value)?.[1] ?? value;
  if (!INVITE_KEY.test(key)) throw ApiError.badRequest('invalid invite key');
  return key;
}

/** Channels the instance creates, follows and runs (`/newsletter/*`), each a request to the worker holding it. */
@Injectable()
export class NewsletterService {
  constructor(
    private readonly sessions: SessionClient,
    private readonly tools: SendContentTools,
  ) {}

  /** `POST /newsletter/create`: the instance owns the new channel. */
  async create(instance: RequestInstance, dto: CreateNewsletterDto): Promise<NewsletterWrappedResponse> {
    const picture = dto.picture?.trim() ? await pictureSource(this.tools, instance, dto.picture, 'picture', MAX_NEWSLETTER_PICTURE_BYTES) : undefined;
    if (picture && 'remove' in picture) throw ApiError.badRequest('picture must be a URL, base64 or a data URI');
    const response = await withStagedPicture(this.tools, instance, picture, () =>
      this.sessions.request(instance.id, 'newsletter.create', {
        instanceId: instance.id,
        name: dto.name.trim(),
        description: dto.description?.trim() ?? '',
        ...(picture ? { picture } : {}),
      }),
    );
    return { response };
  }

  /** `POST /newsletter/info`: by id or JID, followed or not. */
  async info(instance: RequestInstance, dto: NewsletterIdDto): Promise<NewsletterWrappedResponse> {
    const response = await this.sessions.request(instance.id, 'newsletter.info', { instanceId: instance.id, jid: newsletterJidOf(dto) });
    return { response };
  }

  /** `POST /newsletter/link`: by invite key or link. */
  async link(instance: RequestInstance, dto: NewsletterLinkDto): Promise<NewsletterWrappedResponse> {
    const response = await this.sessions.request(instance.id, 'newsletter.link', { instanceId: instance.id, key: inviteKeyOf(dto) });
    return { response };
  }

  /** `GET /newsletter/list`: the channels the instance follows or owns, read from WhatsApp. */
  async list(instance: RequestInstance): Promise<NewsletterListResponse> {
    const { newsletters } = await this.sessions.request(instance.id, 'newsletter.list', { instanceId: instance.id });
    return { response: newsletters };
  }

  /** `POST /newsletter/follow|unfollow|mute|unmute`. */
  async subscription(instance: RequestInstance, dto: NewsletterIdDto, action: SubscriptionAction): Promise<NewsletterDoneResponse> {
    await this.sessions.request(instance.id, 'newsletter.subscription', { instanceId: instance.id, jid: newsletterJidOf(dto), action });
    return { response: true };
  }

  /** `POST /newsletter/name`: owner or admins only (403 otherwise). */
  async updateName(instance: RequestInstance, dto: NewsletterNameDto): Promise<NewsletterDoneResponse> {
    await this.sessions.request(instance.id, 'newsletter.name', { instanceId: instance.id, jid: newsletterJidOf(dto), name: dto.name.trim() });
    return { response: true };
  }

  /** `POST /newsletter/description`: '' removes it; owner or admins only. */
  async updateDescription(instance: RequestInstance, dto: NewsletterDescriptionDto): Promise<NewsletterDoneResponse> {
    const jid = newsletterJidOf(dto);
    await this.sessions.request(instance.id, 'newsletter.description', { instanceId: instance.id, jid, description: dto.description.trim() });
    return { response: true };
  }

  /** `POST /newsletter/messages`: posts read from WhatsApp, each with its views and reactions now. */
  async messages(instance: RequestInstance, dto: NewsletterMessagesDto): Promise<NewsletterMessagesResponse> {
    const { posts } = await this.sessions.request(instance.id, 'newsletter.messages', {
      instanceId: instance.id,
      jid: newsletterJidOf(dto),
      count: dto.count ?? 20,
      ...(dto.beforeid === undefined ? {} : { before: dto.beforeid }),
    });
    return { response: posts };
  }

  /**
   * `POST /newsletter/updates` (deprecated): WhatsApp no longer answers the message-updates query, so the route
   * answers 504 as uazapiGO does, after checking the body; a post's views and reactions come with /newsletter/messages.
   */
  updates(_instance: RequestInstance, dto: NewsletterUpdatesDto): never {
    newsletterJidOf(dto);
    throw new ApiError('timeout', 'WhatsApp no longer answers newsletter message updates: read views and reactions with /newsletter/messages');
  }

  /** `POST /newsletter/delete`: the owner only. */
  async delete(instance: RequestInstance, dto: NewsletterIdDto): Promise<NewsletterDoneResponse> {
    await this.sessions.request(instance.id, 'newsletter.delete', { instanceId: instance.id, jid: newsletterJidOf(dto) });
    return { response: true };
  }

  /** `POST /newsletter/subscribe`: live updates of the channel for a while; answers how long (`5m0s`). */
  async subscribe(instance: RequestInstance, dto: NewsletterIdDto): Promise<NewsletterLiveResponse> {
    const { seconds } = await this.sessions.request(instance.id, 'newsletter.live', { instanceId: instance.id, jid: newsletterJidOf(dto) });
    return { response: goDuration(seconds) };
  }

  /** `POST /newsletter/messages/edit`: a recent post's text or caption (text, image, video and document posts). */
  async editPost(instance: RequestInstance, dto: NewsletterPostEditDto): Promise<NewsletterPostChangeResponse> {
    const response = await this.sessions.request(instance.id, 'newsletter.editPost', { ...postTarget(instance, dto), text: dto.text });
    return { response };
  }

  /** `POST /newsletter/messages/delete`: a recent post, deleted for every follower. */
  async deletePost(instance: RequestInstance, dto: NewsletterPostDto): Promise<NewsletterPostChangeResponse> {
    const response = await this.sessions.request(instance.id, 'newsletter.deletePost', postTarget(instance, dto));
    return { response };
  }

  /** `POST /newsletter/viewed`: view receipts for the posts (each account's view counts once). */
  async viewed(instance: RequestInstance, dto: NewsletterViewedDto): Promise<NewsletterDoneResponse> {
    const serverIds = [...new Set(dto.serverids)];
    await this.sessions.request(instance.id, 'newsletter.viewed', { instanceId: instance.id, jid: newsletterJidOf(dto), serverIds });
    return { response: true };
  }

  /** `POST /newsletter/reaction`: an emoji on a post, or '' to take the instance's reaction back. */
  async react(instance: RequestInstance, dto: NewsletterReactionDto): Promise<NewsletterDoneResponse> {
    await this.sessions.request(instance.id, 'newsletter.react', {
      instanceId: instance.id,
      jid: newsletterJidOf(dto),
      serverId: dto.serverid,
      reaction: dto.reaction.trim(),
      ...(dto.reactionmessageid ? { reactionId: dto.reactionmessageid } : {}),
    });
    return { response: true };
  }

  /** `POST /newsletter/picture`: a URL, base64 or data URI of an image of at most 1 MB, or `remove`; owner or admins only. */
  async picture(instance: RequestInstance, dto: NewsletterPictureDto): Promise<NewsletterDoneResponse> {
    const jid = newsletterJidOf(dto);
    const picture = await pictureSource(this.tools, instance, dto.picture, 'picture', MAX_NEWSLETTER_PICTURE_BYTES);
    await withStagedPicture(this.tools, instance, picture, () =>
      this.sessions.request(instance.id, 'newsletter.picture', { instanceId: instance.id, jid, picture }),
    );
    return { response: true };
  }

  /** `POST /newsletter/settings`: who may react to the posts; owner or admins only. */
  async settings(instance: RequestInstance, dto: NewsletterSettingsDto): Promise<NewsletterDoneResponse> {
    await this.sessions.request(instance.id, 'newsletter.settings', { instanceId: instance.id, jid: newsletterJidOf(dto), reactionCodes: dto.reactionCodes });
    return { response: true };
  }

  /** `POST /newsletter/search`: a page of WhatsApp's channel directory; `after` names the next one. */
  async search(instance: RequestInstance, dto: NewsletterSearchDto): Promise<NewsletterSearchResponse> {
    const response = await this.sessions.request(instance.id, 'newsletter.search', {
      instanceId: instance.id,
      limit: dto.limit ?? 20,
      view: (dto.view ?? 'RECOMMENDED').toUpperCase(),
      countryCodes: (dto.countryCodes ?? []).map((code) => code.toUpperCase()),
      ...(dto.searchText?.trim() ? { searchText: dto.searchText.trim() } : {}),
      ...(dto.after ? { after: dto.after } : {}),
    });
    return { response };
  }

  /** `POST /newsletter/admin/invite|revoke|remove`: owner or admins only. */
  async admin(instance: RequestInstance, dto: NewsletterPhoneDto, action: AdminAction): Promise<NewsletterDoneResponse> {
    const jid = newsletterJidOf(dto);
    await this.sessions.request(instance.id, 'newsletter.admin', { instanceId: instance.id, jid, action, user: newsletterUserOf(dto.phone) });
    return { response: true };
  }

  /** `POST /newsletter/admin/accept`: the instance becomes an admin of a channel that invited it. */
  async acceptAdmin(instance: RequestInstance, dto: NewsletterIdDto): Promise<NewsletterDoneResponse> {
    await this.sessions.request(instance.id, 'newsletter.adminAccept', { instanceId: instance.id, jid: newsletterJidOf(dto) });
    return { response: true };
  }

  /** `POST /newsletter/owner/transfer`: to one of the channel's admins; the owner only. */
  async transferOwner(instance: RequestInstance, dto: NewsletterOwnerDto): Promise<NewsletterDoneResponse> {
    const jid = newsletterJidOf(dto);
    await this.sessions.request(instance.id, 'newsletter.owner', {
      instanceId: instance.id,
      jid,
      user: newsletterUserOf(dto.phone),
      quitAdmin: dto.quitAdmin === true,
    });
    return { response: true };
  }
}

/** The post of an edit or a deletion: `messageid` or `serverid` (400 without either), searched in `count` (50) × `maxpages` (3) posts. */
function postTarget(instance: RequestInstance, dto: NewsletterPostDto) {
  const messageId = dto.messageid?.trim();
  if (!messageId && dto.serverid === undefined) throw ApiError.badRequest('messageid or serverid is required');
  return {
    instanceId: instance.id,
    jid: newsletterJidOf(dto),
    ...(messageId ? { messageId } : {}),
    ...(dto.serverid === undefined ? {} : { serverId: dto.serverid }),
    count: dto.count ?? 50,
    maxPages: dto.maxpages ?? 3,
  };
}
