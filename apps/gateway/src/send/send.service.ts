import { Injectable } from '@nestjs/common';

import { ApiError } from '../common/api-error';
import type { SentMessageResponse } from '../common/dto/message.response';
import type { ReplyResponse } from '../common/dto/reply.response';
import { SessionClient } from '../session/session.client';
import { buildContactContent, buildLocationContent, buildMediaContent, buildTextContent } from './content-builders';
import { LOCATION_ERROR, type ChatPresenceDto, type SendContactDto, type SendLocationDto, type SendMediaDto, type SendTextDto } from './dto/send-common.dto';
import { InteractiveRepliesService } from './interactive/interactive-replies.service';
import { chatTarget, SendContentTools } from './send-content-tools';
import { SendRequester } from './send-requester';
import type { RequestInstance } from '../common/request-instance';

/**
 * The plain send endpoints, one use case each: the target, the content (placeholders now, or when a
 * queued send goes out), the request to the worker and the answer. The DTOs have checked the fields.
 */
@Injectable()
export class SendService {
  constructor(
    private readonly tools: SendContentTools,
    private readonly requester: SendRequester,
    private readonly interactiveReplies: InteractiveRepliesService,
    private readonly sessions: SessionClient,
  ) {}

  /** `POST /send/text`; with `replyid` and a text starting with `>`, an answer to a poll, list or buttons message. */
  async sendText(instance: RequestInstance, dto: SendTextDto): Promise<SentMessageResponse> {
    const chatJid = chatTarget(dto.number, 'missing number or text');
    const reply = await this.interactiveReplies.tryReply(instance, chatJid, dto);
    if (reply) return reply;
    // Queued sends resolve placeholders when they go out (the lead may change meanwhile).
    return this.requester.send(instance, dto, chatJid, await buildTextContent(this.tools, instance, chatJid, dto, dto.async === true));
  }

  /** `POST /send/media`. */
  async sendMedia(instance: RequestInstance, dto: SendMediaDto): Promise<SentMessageResponse> {
    const chatJid = chatTarget(dto.number);
    return this.requester.send(instance, dto, chatJid, await buildMediaContent(this.tools, instance, chatJid, dto, dto.async === true));
  }

  /** `POST /send/contact`. */
  async sendContact(instance: RequestInstance, dto: SendContactDto): Promise<SentMessageResponse> {
    const chatJid = chatTarget(dto.number);
    return this.requester.send(instance, dto, chatJid, buildContactContent(dto));
  }

  /** `POST /send/location`. */
  async sendLocation(instance: RequestInstance, dto: SendLocationDto): Promise<SentMessageResponse> {
    if (!dto.number) throw ApiError.badRequest(LOCATION_ERROR);
    const chatJid = chatTarget(dto.number);
    return this.requester.send(instance, dto, chatJid, buildLocationContent(dto));
  }

  /** `POST /message/presence`: typing or recording shown in the chat (for `delay` ms). */
  async chatPresence(instance: RequestInstance, dto: ChatPresenceDto): Promise<ReplyResponse> {
    const chatJid = chatTarget(dto.number);
    await this.sessions.request(instance.id, 'chat.presence', { instanceId: instance.id, chatJid, presence: dto.presence, delayMs: dto.delay ?? 0 });
    return { response: 'Chat presence sent successfully' };
  }
}
