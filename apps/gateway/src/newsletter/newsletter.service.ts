import { Injectable } from '@nestjs/common';
import type { InstanceRpc } from '@gw/contracts';
import type { InstanceEntity } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { SessionClient } from '../session/session.client';
import { INVALID_NEWSLETTER_ID, NEWSLETTER_ID } from './dto/newsletter.dto';
import type { CreateNewsletterDto, NewsletterDescriptionDto, NewsletterIdDto, NewsletterLinkDto, NewsletterNameDto } from './dto/newsletter.dto';
import type { NewsletterMessagesDto, NewsletterUpdatesDto } from './dto/newsletter.dto';

type NewsletterMetadata = InstanceRpc['newsletter.info']['reply'];
type NewsletterPost = InstanceRpc['newsletter.messages']['reply']['posts'][number];
type SubscriptionAction = InstanceRpc['newsletter.subscription']['request']['action'];

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
  constructor(private readonly sessions: SessionClient) {}

  /** `POST /newsletter/create`: the instance owns the new channel. */
  async create(instance: InstanceEntity, dto: CreateNewsletterDto): Promise<{ response: NewsletterMetadata }> {
    if (dto.picture?.trim()) throw ApiError.badRequest('picture is not supported yet: create the channel without it');
    const response = await this.sessions.request(instance.id, 'newsletter.create', {
      instanceId: instance.id,
      name: dto.name.trim(),
      description: dto.description?.trim() ?? '',
    });
    return { response };
  }

  /** `POST /newsletter/info`: by id or JID, followed or not. */
  async info(instance: InstanceEntity, dto: NewsletterIdDto): Promise<{ response: NewsletterMetadata }> {
    const response = await this.sessions.request(instance.id, 'newsletter.info', { instanceId: instance.id, jid: newsletterJidOf(dto) });
    return { response };
  }

  /** `POST /newsletter/link`: by invite key or link. */
  async link(instance: InstanceEntity, dto: NewsletterLinkDto): Promise<{ response: NewsletterMetadata }> {
    const response = await this.sessions.request(instance.id, 'newsletter.link', { instanceId: instance.id, key: inviteKeyOf(dto) });
    return { response };
  }

  /** `GET /newsletter/list`: the channels the instance follows or owns, read from WhatsApp. */
  async list(instance: InstanceEntity): Promise<{ response: NewsletterMetadata[] }> {
    const { newsletters } = await this.sessions.request(instance.id, 'newsletter.list', { instanceId: instance.id });
    return { response: newsletters };
  }

  /** `POST /newsletter/follow|unfollow|mute|unmute`. */
  async subscription(instance: InstanceEntity, dto: NewsletterIdDto, action: SubscriptionAction): Promise<{ response: true }> {
    await this.sessions.request(instance.id, 'newsletter.subscription', { instanceId: instance.id, jid: newsletterJidOf(dto), action });
    return { response: true };
  }

  /** `POST /newsletter/name`: owner or admins only (403 otherwise). */
  async updateName(instance: InstanceEntity, dto: NewsletterNameDto): Promise<{ response: true }> {
    await this.sessions.request(instance.id, 'newsletter.name', { instanceId: instance.id, jid: newsletterJidOf(dto), name: dto.name.trim() });
    return { response: true };
  }

  /** `POST /newsletter/description`: '' removes it; owner or admins only. */
  async updateDescription(instance: InstanceEntity, dto: NewsletterDescriptionDto): Promise<{ response: true }> {
    const jid = newsletterJidOf(dto);
    await this.sessions.request(instance.id, 'newsletter.description', { instanceId: instance.id, jid, description: dto.description.trim() });
    return { response: true };
  }

  /** `POST /newsletter/messages`: posts read from WhatsApp, each with its views and reactions now. */
  async messages(instance: InstanceEntity, dto: NewsletterMessagesDto): Promise<{ response: NewsletterPost[] }> {
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
  updates(_instance: InstanceEntity, dto: NewsletterUpdatesDto): never {
    newsletterJidOf(dto);
    throw new ApiError('timeout', 'WhatsApp no longer answers newsletter message updates: read views and reactions with /newsletter/messages');
  }

  /** `POST /newsletter/delete`: the owner only. */
  async delete(instance: InstanceEntity, dto: NewsletterIdDto): Promise<{ response: true }> {
    await this.sessions.request(instance.id, 'newsletter.delete', { instanceId: instance.id, jid: newsletterJidOf(dto) });
    return { response: true };
  }
}
