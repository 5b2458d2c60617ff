import { ErrorCode, RpcError } from '@gw/contracts';
import { checkMediaBytes } from '@gw/domain';
import type { MediaSource } from '../outbound/media-source';

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
): Promise<Buffer> {
  if (!media) throw new RpcError(ErrorCode.Internal, 'no media source configured');
  const { data, mimetype } = 'url' in source ? await media.fetch(source.url, maxBytes) : await media.load(instanceId, source);
  if (data.length > maxBytes) throw new RpcError(ErrorCode.BadRequest, `${field} is larger than ${Math.round(maxBytes / 1024)} KB`);
  const checked = checkMediaBytes('image', data, mimetype, field);
  if (!checked.ok) throw new RpcError(ErrorCode.BadRequest, checked.error);
  return data;
}
