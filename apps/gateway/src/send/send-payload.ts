import type { SendRequest } from '@gw/contracts';
import type { BuiltContent } from './content-builders';

/** What replaces an inline file in a stored `sendPayload`. */
export const OMITTED_MEDIA = '[base64 omitted]';

/**
 * Fields of the send bodies that carry a file (a URL or base64), at any depth: `/send/media` file and
 * thumbnail, the menu's imageButton, carousel cards' image/video/document, the payment request's
 * fileUrl, the link preview image, a status' file. Nothing else (a text, a caption) is ever touched.
 */
const MEDIA_FIELDS = new Set(['file', 'image', 'video', 'document', 'audio', 'sticker', 'thumbnail', 'fileUrl', 'imageButton', 'linkPreviewImage']);

/** A value kept as sent: a URL (the spec: "A file given by URL is kept as sent"). */
const isUrl = (value: string) => /^https?:\/\//i.test(value.trim());

/**
 * `sendPayload` keeps what was asked, without base64 media (spec, Message record): inline files in the
 * known media fields are replaced at any depth (carousel cards, nested objects); every other value,
 * however long, is kept as it is.
 */
export function withoutInlineMedia(payload: Record<string, unknown>): Record<string, unknown> {
  return strip(payload) as Record<string, unknown>;
}

/**
 * The stored record's fields of a send (here and in the campaigns): `sendPayload` is what was asked
 * (`payload`, the built one unless given) without base64 media; the media's link (response.fileUrl)
 * is also the record's fileURL.
 */
export function sendRecord(built: BuiltContent, trackSource: string, trackId: string, payload = built.payload): SendRequest['record'] {
  const fileUrl = built.responseExtra?.fileUrl;
  return {
    sendFunction: built.sendFunction,
    sendPayload: withoutInlineMedia(payload),
    trackSource,
    trackId,
    sendFolderId: '',
    fileUrl: typeof fileUrl === 'string' ? fileUrl : '',
  };
}

function strip(value: unknown, key?: string): unknown {
  if (typeof value === 'string') return key !== undefined && MEDIA_FIELDS.has(key) && value.trim() !== '' && !isUrl(value) ? OMITTED_MEDIA : value;
  // A menu carousel's choices carry a card's image as `{URL or base64}` (libs/domain parseCarousel).
  if (Array.isArray(value) && key === 'choices') return value.map((entry) => (typeof entry === 'string' ? choiceWithoutMedia(entry) : strip(entry)));
  if (Array.isArray(value)) return value.map((entry) => strip(entry));
  if (value && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [name, entry] of Object.entries(value)) {
      if (entry === undefined) continue;
      result[name] = strip(entry, name);
    }
    return result;
  }
  return value;
}

function choiceWithoutMedia(choice: string): string {
  const media = /^\s*\{(.*)\}\s*$/s.exec(choice);
  return media && media[1].trim() !== '' && !isUrl(media[1]) ? `{${OMITTED_MEDIA}}` : choice;
}
