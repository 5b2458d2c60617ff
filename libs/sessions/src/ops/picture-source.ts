import { ErrorCode, RpcError } from '@gw/contracts';
import { checkMediaBytes } from '@gw/domain';
import { type MediaSource, MediaTooLargeError } from '../outbound/media-source';

/** Where a group or channel picture comes from (see the contracts' PictureSource). */
export type PictureInput = { url: string } | { fileId: string } | { remove: true };

/** A picture source from the bus, or BadRequest. */
export function pictureSourceOf(value: unknown, field: string): PictureInput {
  const raw = (value && typeof value === 'object' ? value : {}) as Record<string, unknown>;
  if (raw.remove === true) return { remove: true };
  if (typeof raw.url === 'string' && /^https?:\/\//i.test(raw.url) && raw.url.length <= 4096) return { url: raw.url };
  if (typeof raw.fileId === 'string' && /^[A-Za-z0-9_-]{1,100}$/.test(raw.fileId)) return { fileId: raw.fileId };
  throw new RpcError(ErrorCode.BadRequest, `${field} must be a URL, a staged upload or remove`);
}

/**
 * The picture's bytes: a URL fetched through the SSRF guard (at most `maxBytes`) or a staged upload, refused
 * unless they are an image (JPEG, PNG, WebP…). Baileys makes the 640×640 JPEG WhatsApp takes from them.
 */
export async function loadPicture(
  media: MediaSource | undefined,
  instanceId: string,
  source: { url: string } | { fileId: string },
  field: string,
  maxBytes: number,
  /** What bytes that are no image answer: BadRequest (400), or UnsupportedMedia (415) where the reference says so (groups). */
  notAnImage: typeof ErrorCode.BadRequest | typeof ErrorCode.UnsupportedMedia = ErrorCode.BadRequest,
): Promise<Buffer> {
  if (!media) throw new RpcError(ErrorCode.Internal, 'no media source configured');
  // Too large is a 413 however the picture came: base64 (checked by the gateway), a staged upload or a URL.
  const tooLarge = () => new RpcError(ErrorCode.TooLarge, `${field} is larger than ${Math.round(maxBytes / 1024)} KB`);
  let loaded: { data: Buffer; mimetype: string };
  try {
    loaded = 'url' in source ? await media.fetch(source.url, maxBytes) : await media.load(instanceId, source);
  } catch (error) {
    throw error instanceof MediaTooLargeError ? tooLarge() : error;
  }
  const { data, mimetype } = loaded;
  if (data.length > maxBytes) throw tooLarge();
  const checked = checkMediaBytes('image', data, mimetype, field);
  if (!checked.ok) throw new RpcError(notAnImage, checked.error);
  return data;
}
