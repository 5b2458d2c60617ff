import type { MediaKind, OutboundContent } from '@gw/contracts';

import { ApiError } from '../common/api-error';
import { isUrlOrBase64, numberLike } from './dto/field-rules';
import { LOCATION_ERROR, type SendContactDto, type SendLocationDto, type SendMediaDto, type SendTextDto } from './dto/send-common.dto';
import type { ContentTools } from './send-content-tools';
import { buildVcard } from './vcard';
import type { SendOutcome } from '../common/dto/message.response';
import type { RequestInstance } from '../common/request-instance';

const MIME_BY_TYPE: Record<string, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/mpeg',
  document: 'application/octet-stream',
  sticker: 'image/webp',
};

/** What a send endpoint relays: the content, the record's sendFunction and payload, extra `response` fields. */
export interface BuiltContent {
  content: OutboundContent;
  sendFunction: string;
  payload: Record<string, unknown>;
  responseExtra?: Pick<SendOutcome, 'fileUrl'>;
}

/**
 * The content builders shared by the send endpoints and the campaigns (`/sender/*`). `queued`: the
 * send goes through the async queue, whose dispatcher resolves placeholders when it goes out. The
 * endpoints' DTOs and the campaigns check text, media type and file before; contact and location
 * fields are checked here, as the campaigns' bodies are no DTO.
 */
export async function buildTextContent(
  tools: ContentTools,
  instance: RequestInstance,
  chatJid: string,
  dto: SendTextDto,
  queued: boolean,
): Promise<BuiltContent> {
  const text = queued ? dto.text : await tools.placeholders(instance, chatJid, dto.text);
  const linkPreview =
    dto.linkPreview === true
      ? await tools.previews.build(text, {
          title: dto.linkPreviewTitle,
          description: dto.linkPreviewDescription,
          image: dto.linkPreviewImage,
          large: dto.linkPreviewLarge,
          stage: (base64) => tools.stageFile(instance, base64, 'image/jpeg', 'preview.jpg'),
        })
      : null;
  return { content: { kind: 'text', text, linkPreview }, sendFunction: 'SendTextMessage', payload: { ...dto, text } };
}

export async function buildMediaContent(
  tools: ContentTools,
  instance: RequestInstance,
  chatJid: string,
  dto: Pick<SendMediaDto, 'type' | 'file' | 'text' | 'mimetype' | 'docName' | 'thumbnail' | 'viewOnce'> & Partial<Pick<SendMediaDto, 'caption'>>,
  queued: boolean,
): Promise<BuiltContent> {
  const kind: MediaKind =
    dto.type === 'videoplay' || dto.type === 'ptv' ? 'video' : dto.type === 'myaudio' || dto.type === 'ptt' ? 'audio' : (dto.type as MediaKind);
  // The campaigns' bodies are no DTO: checked before anything is staged.
  if (dto.thumbnail && !isUrlOrBase64(dto.thumbnail)) throw ApiError.badRequest('thumbnail must be an http(s) URL or base64');
  const mimetype = dto.mimetype ?? (/^data:([^;,]+)/.exec(dto.file)?.[1] || '');
  const source = /^https?:\/\//i.test(dto.file.trim())
    ? { url: dto.file.trim() }
    : { fileId: await tools.stageFile(instance, dto.file, mimetype || MIME_BY_TYPE[kind], dto.docName ?? '', kind) };
  // `caption`: the same under the name published clients send.
  const written = dto.text || dto.caption;
  const caption = !written ? '' : queued ? written : await tools.placeholders(instance, chatJid, written);
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
  // A base64 file is served from the gateway's store while it is kept (7 days).
  const fileUrl = 'url' in source ? source.url : tools.fileLink(source.fileId);
  const { caption: _alias, ...payload } = dto;
  return { content, sendFunction: 'SendMediaMessage', payload: { ...payload, text: caption }, responseExtra: { fileUrl } };
}

export function buildContactContent(dto: SendContactDto): BuiltContent {
  if (!dto.fullName || !dto.fullName.trim()) throw ApiError.badRequest('missing fullName');
  const phones = (dto.phoneNumber ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (phones.length === 0) throw ApiError.badRequest('missing phoneNumber');
  const invalid = phones.find((phone) => !/^\+?[\d\s().-]{8,20}$/.test(phone));
  if (invalid) throw ApiError.badRequest(`phoneNumber: "${invalid}" is not a phone number`);
  const vcard = buildVcard({ fullName: dto.fullName.trim(), phones, organization: dto.organization, email: dto.email, url: dto.url });
  return { content: { kind: 'contacts', displayName: dto.fullName.trim(), vcards: [vcard] }, sendFunction: 'SendContactMessage', payload: { ...dto } };
}

export function buildLocationContent(dto: SendLocationDto): BuiltContent {
  const latitude = coordinate(dto.latitude, 90);
  const longitude = coordinate(dto.longitude, 180);
  if (latitude === null || longitude === null) throw ApiError.badRequest(LOCATION_ERROR);
  return {
    content: { kind: 'location', latitude, longitude, name: dto.name ?? '', address: dto.address ?? '' },
    sendFunction: 'SendLocationMessage',
    payload: { ...dto },
  };
}

/** A latitude/longitude as a number (numeric strings too) within ±limit, else null. */
function coordinate(value: unknown, limit: number): number | null {
  const number = numberLike(value);
  return Number.isFinite(number) && Math.abs(number) <= limit ? number : null;
}
