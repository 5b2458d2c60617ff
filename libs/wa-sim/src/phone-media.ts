// Media a simulated phone sends (encrypted and uploaded to the media server, as WhatsApp clients do) and
// media it received (downloaded and decrypted).
import { proto } from './baileys';
import type { InboxEntry } from './accounts';
import { SimError } from './errors';
import { decryptMedia, encryptMedia } from './media-server';
import type { MediaServer } from './media-server';
import { unixNow } from './node-io';
import type { MediaKind, SendMediaInput } from './simulator-api-types';

const MEDIA_KINDS: MediaKind[] = ['image', 'video', 'audio', 'document', 'sticker'];

const DEFAULT_MIMETYPES: Record<MediaKind, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/ogg; codecs=opus',
  document: 'application/octet-stream',
  sticker: 'image/webp',
};

/** The message a phone sends for `input`: the file encrypted and stored on the media server, its keys in the message. */
export async function uploadMediaMessage(media: MediaServer, input: SendMediaInput): Promise<proto.IMessage> {
  if (!MEDIA_KINDS.includes(input?.type)) throw new SimError(400, `type must be one of ${MEDIA_KINDS.join('|')}`);
  if (typeof input.data !== 'string' || !input.data) throw new SimError(400, 'data (base64) is required');
  const plain = Buffer.from(input.data, 'base64');
  const encrypted = await encryptMedia(plain, input.type);
  const { directPath, url } = media.store(encrypted.encrypted, input.type);
  const common = {
    url,
    directPath,
    mediaKey: encrypted.mediaKey,
    fileEncSha256: encrypted.fileEncSha256,
    fileSha256: encrypted.fileSha256,
    fileLength: encrypted.fileLength,
    mediaKeyTimestamp: unixNow(),
    mimetype: input.mimetype ?? DEFAULT_MIMETYPES[input.type],
  };
  return input.type === 'image'
    ? { imageMessage: { ...common, caption: input.caption } }
    : input.type === 'video'
      ? { videoMessage: { ...common, caption: input.caption, seconds: input.seconds } }
      : input.type === 'audio'
        ? { audioMessage: { ...common, ptt: !!input.ptt, seconds: input.seconds } }
        : input.type === 'document'
          ? { documentMessage: { ...common, fileName: input.fileName ?? 'file', title: input.fileName, caption: input.caption } }
          : { stickerMessage: { ...common } };
}

/** The bytes and type of the media in a message the phone received. */
export async function decryptInboxMedia(
  server: MediaServer | undefined,
  entry: InboxEntry | undefined,
  id: string,
): Promise<{ bytes: Buffer; mimetype: string }> {
  if (!entry?.message) throw new SimError(404, `no message ${id} in the inbox`);
  const message = proto.Message.fromObject(entry.message);
  const kinds: Array<[MediaKind, proto.Message.IImageMessage | null | undefined]> = [
    ['image', message.imageMessage],
    ['video', message.videoMessage],
    ['audio', message.audioMessage],
    ['document', message.documentMessage ?? message.documentWithCaptionMessage?.message?.documentMessage],
    ['sticker', message.stickerMessage],
  ];
  const found = kinds.find(([, m]) => !!m);
  if (!found || !found[1]) throw new SimError(404, `message ${id} has no media`);
  const [kind, media] = found;
  const stored = server?.fetch(media.directPath ?? media.url ?? '');
  if (!stored || !media.mediaKey) throw new SimError(404, 'media not stored on this simulator');
  return { bytes: await decryptMedia(stored.bytes, media.mediaKey, kind), mimetype: media.mimetype ?? 'application/octet-stream' };
}
