import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import type { MediaKind, OutboundContent } from '@gw/contracts';
import type { InstanceEntity } from '@gw/persistence';
import { ApiError } from '../common/api-error';
import { CurrentInstance, InstanceGuard } from '../common/auth.guards';
import { SessionClient } from '../session/session.client';
import { ChatPresenceDto, MEDIA_TYPES, SendContactDto, SendLocationDto, SendMediaDto, SendTextDto } from './dto/send-common.dto';
import { SendService } from './send.service';
import { InteractiveRepliesService } from './interactive/interactive-replies.service';
import { buildVcard } from './vcard';

const MIME_BY_TYPE: Record<string, string> = { image: 'image/jpeg', video: 'video/mp4', audio: 'audio/mpeg', document: 'application/octet-stream', sticker: 'image/webp' };

@Controller()
@UseGuards(InstanceGuard)
export class SendController {
  constructor(
    private readonly sends: SendService,
    private readonly sessions: SessionClient,
    private readonly interactiveReplies: InteractiveRepliesService,
  ) {}

  @Post('send/text')
  @HttpCode(200)
  async text(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendTextDto) {
    const interactive = await this.interactiveReplies.tryReply(instance, dto);
    if (interactive) return interactive;
    if (!dto.number || !dto.text || !dto.text.trim()) throw ApiError.badRequest('missing number or text');
    const chatJid = this.sends.target(dto.number, 'missing number or text');
    // Queued sends resolve placeholders when they go out (the lead may change meanwhile).
    const text = dto.async ? dto.text : await this.sends.placeholders(instance, chatJid, dto.text);
    const linkPreview =
      dto.linkPreview === true
        ? await this.sends.previews.build(text, { title: dto.linkPreviewTitle, description: dto.linkPreviewDescription, image: dto.linkPreviewImage, large: dto.linkPreviewLarge })
        : null;
    return this.sends.send(instance, dto, chatJid, { kind: 'text', text, linkPreview }, 'SendTextMessage', { ...dto, text });
  }

  @Post('send/media')
  @HttpCode(200)
  async media(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendMediaDto) {
    const chatJid = this.sends.target(dto.number);
    if (!dto.type || !(MEDIA_TYPES as readonly string[]).includes(dto.type)) throw ApiError.badRequest(`type must be one of ${MEDIA_TYPES.join(', ')}`);
    if (!dto.file || !dto.file.trim()) throw ApiError.badRequest('missing file (a URL or base64)');
    const kind: MediaKind = dto.type === 'videoplay' || dto.type === 'ptv' ? 'video' : dto.type === 'myaudio' || dto.type === 'ptt' ? 'audio' : (dto.type as MediaKind);
    const mimetype = dto.mimetype ?? (/^data:([^;,]+)/.exec(dto.file)?.[1] || '');
    const source = /^https?:\/\//i.test(dto.file.trim())
      ? { url: dto.file.trim() }
      : { fileId: await this.sends.stageFile(instance, dto.file, mimetype || MIME_BY_TYPE[kind], dto.docName ?? '') };
    const caption = !dto.text ? '' : dto.async ? dto.text : await this.sends.placeholders(instance, chatJid, dto.text);
    const content: OutboundContent = {
      kind: 'media',
      mediaType: kind,
      source,
      mimetype,
      caption,
      fileName: dto.docName ?? '',
      ptt: dto.type === 'ptt' || dto.type === 'myaudio',
      gifPlayback: dto.type === 'videoplay',
      ptv: dto.type === 'ptv',
      viewOnce: dto.viewOnce === true,
      thumbnailBase64: dto.thumbnail && !/^https?:\/\//i.test(dto.thumbnail) ? dto.thumbnail.replace(/^data:[^,]+,/, '') : '',
    };
    const fileUrl = 'url' in source ? source.url : '';
    return this.sends.send(instance, dto, chatJid, content, 'SendMediaMessage', { ...dto, text: caption }, { fileUrl });
  }

  @Post('send/contact')
  @HttpCode(200)
  async contact(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendContactDto) {
    const chatJid = this.sends.target(dto.number);
    if (!dto.fullName || !dto.fullName.trim()) throw ApiError.badRequest('missing fullName');
    const phones = (dto.phoneNumber ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
    if (phones.length === 0) throw ApiError.badRequest('missing phoneNumber');
    const invalid = phones.find((phone) => !/^\+?[\d\s().-]{8,20}$/.test(phone));
    if (invalid) throw ApiError.badRequest(`phoneNumber: "${invalid}" is not a phone number`);
    const vcard = buildVcard({ fullName: dto.fullName.trim(), phones, organization: dto.organization, email: dto.email, url: dto.url });
    return this.sends.send(instance, dto, chatJid, { kind: 'contacts', displayName: dto.fullName.trim(), vcards: [vcard] }, 'SendContactMessage', { ...dto });
  }

  @Post('send/location')
  @HttpCode(200)
  async location(@CurrentInstance() instance: InstanceEntity, @Body() dto: SendLocationDto) {
    if (!dto.number) throw ApiError.badRequest('missing required fields or invalid coordinates');
    const chatJid = this.sends.target(dto.number);
    const latitude = coordinate(dto.latitude, 90);
    const longitude = coordinate(dto.longitude, 180);
    if (latitude === null || longitude === null) throw ApiError.badRequest('missing required fields or invalid coordinates');
    return this.sends.send(instance, dto, chatJid, { kind: 'location', latitude, longitude, name: dto.name ?? '', address: dto.address ?? '' }, 'SendLocationMessage', { ...dto });
  }

  @Post('message/presence')
  @HttpCode(200)
  async presence(@CurrentInstance() instance: InstanceEntity, @Body() dto: ChatPresenceDto) {
    const chatJid = this.sends.target(dto.number);
    if (!dto.presence || !['composing', 'recording', 'paused'].includes(dto.presence)) throw ApiError.badRequest('presence must be composing, recording or paused');
    await this.sessions.request(instance.id, 'chat.presence', { instanceId: instance.id, chatJid, presence: dto.presence as 'composing' | 'recording' | 'paused', delayMs: dto.delay ?? 0 });
    return { response: 'Chat presence sent successfully' };
  }
}

/** A latitude/longitude as a number (numeric strings too) within ±limit, else null. */
function coordinate(value: unknown, limit: number): number | null {
  const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(number) && Math.abs(number) <= limit ? number : null;
}
