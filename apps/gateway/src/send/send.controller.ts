import { Body, Controller, HttpCode, Inject, Post, UseGuards } from '@nestjs/common';
import type { InstanceEntity } from '@gw/persistence';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '../runtime/tokens';
import { ApiError } from '../common/api-error';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { SessionClient } from '../session/session.client';
import { buildContactContent, buildLocationContent, buildMediaContent, buildTextContent, type BuiltContent } from './content-builders';
import { ChatPresenceDto, SendContactDto, SendLocationDto, SendMediaDto, SendTextDto, type SendCommonDto } from './dto/send-common.dto';
import { SendService } from './send.service';
import { InteractiveRepliesService } from './interactive/interactive-replies.service';
import { StatusSender } from './status/status-sender';
import { SendStatusDto } from './status/status.dto';

@Controller()
@UseGuards(InstanceGuard)
export class SendController {
  private readonly statuses: StatusSender;

  constructor(
    private readonly sends: SendService,
    private readonly sessions: SessionClient,
    private readonly interactiveReplies: InteractiveRepliesService,
    @Inject(DATA_SOURCE) dataSource: DataSource,
  ) {
    this.statuses = new StatusSender(dataSource, sends, sessions);
  }

  @Post('send/text')
  @HttpCode(200)
  async text(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendTextDto) {
    const interactive = await this.interactiveReplies.tryReply(instance, dto);
    if (interactive) return interactive;
    if (!dto.number || !dto.text || !dto.text.trim()) throw ApiError.badRequest('missing number or text');
    const chatJid = this.sends.target(dto.number, 'missing number or text');
    // Queued sends resolve placeholders when they go out (the lead may change meanwhile).
    return this.relay(instance, dto, chatJid, await buildTextContent(this.sends, instance, chatJid, dto, dto.async === true));
  }

  @Post('send/media')
  @HttpCode(200)
  async media(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendMediaDto) {
    const chatJid = this.sends.target(dto.number);
    return this.relay(instance, dto, chatJid, await buildMediaContent(this.sends, instance, chatJid, dto, dto.async === true));
  }

  @Post('send/contact')
  @HttpCode(200)
  async contact(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendContactDto) {
    const chatJid = this.sends.target(dto.number);
    return this.relay(instance, dto, chatJid, buildContactContent(dto));
  }

  @Post('send/location')
  @HttpCode(200)
  async location(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendLocationDto) {
    if (!dto.number) throw ApiError.badRequest('missing required fields or invalid coordinates');
    const chatJid = this.sends.target(dto.number);
    return this.relay(instance, dto, chatJid, buildLocationContent(dto));
  }

  @Post('send/status')
  @HttpCode(200)
  status(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendStatusDto) {
    return this.statuses.send(instance, dto);
  }

  private relay(instance: InstanceEntity, dto: SendCommonDto, chatJid: string, built: BuiltContent) {
    return this.sends.send(instance, dto, chatJid, built.content, built.sendFunction, built.payload, built.responseExtra);
  }

  @Post('message/presence')
  @HttpCode(200)
  async presence(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatPresenceDto) {
    const chatJid = this.sends.target(dto.number);
    if (!dto.presence || !['composing', 'recording', 'paused'].includes(dto.presence))
      throw ApiError.badRequest('presence must be composing, recording or paused');
    await this.sessions.request(instance.id, 'chat.presence', {
      instanceId: instance.id,
      chatJid,
      presence: dto.presence as 'composing' | 'recording' | 'paused',
      delayMs: dto.delay ?? 0,
    });
    return { response: 'Chat presence sent successfully' };
  }
}
