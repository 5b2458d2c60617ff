import { ErrorCode, RpcError } from '@gw/contracts';
import { contentField, unwrapMessage, type ProtoMessage } from '@gw/domain';
import type { FileRepository, InstanceRepository } from '@gw/persistence';
import { type Logger, SsrfGuard } from '@gw/platform';
import { BufferJSON, downloadMediaMessage, type WAMessage } from '@whiskeysockets/baileys';
import type { SimulatorSeam } from '../config/session-worker.config';
import type { MediaSource } from '../outbound/media-source';
import type { SendLedger } from '../outbound/send-ledger';
import { networkOptions } from '../socket/network-options';
import type { OpHandler, OpHandlers, OpRequestParsers } from './op-handler';

/** The `media.*` ops: a received message's media, downloaded into the file store. */
export type MediaOps = 'media.download';

export interface MediaOpsDependencies {
  ledger: SendLedger;
  files: FileRepository;
  instances: InstanceRepository;
  logger: Logger;
  /** The simulator seam (its media server is self-signed), when active. */
  simulator?: SimulatorSeam;
  /** Its SSRF guard passes the instance's proxy (without one, no private address does). */
  media?: MediaSource;
}

const DEFAULT_LINK_TTL_MS = 7 * 86_400_000;

export const mediaRequests = {
  'media.download': (raw, instanceId) => ({
    instanceId,
    messageId: String(raw.messageId ?? ''),
    ttlMs: Number(raw.ttlMs) || DEFAULT_LINK_TTL_MS,
    ...(Number(raw.maxBytes) > 0 ? { maxBytes: Number(raw.maxBytes) } : {}),
  }),
} satisfies OpRequestParsers<MediaOps>;

export function mediaOps({ ledger, files, instances, logger, simulator, media }: MediaOpsDependencies): OpHandlers<MediaOps> {
  const guard = media?.ssrf ?? new SsrfGuard();
  const downloadMedia: OpHandler<'media.download'> = async (session, request) => {
    const found = await ledger.rawMessage(session.instanceId, request.messageId);
    if (!found) throw new RpcError(ErrorCode.NotFound, 'Message not found');
    if (!found.raw) throw new RpcError(ErrorCode.BadRequest, 'this message has no downloadable media');
    const message = JSON.parse(found.raw, BufferJSON.reviver) as WAMessage;
    const inner = describeMedia(message);
    const maxBytes = request.maxBytes;
    if (maxBytes && inner.fileLength > maxBytes) throw tooLarge(maxBytes, inner.fileLength);
    const socket = session.openSocket();
    const row = await instances.findById(session.instanceId);
    const network = networkOptions(row?.proxy ?? null, simulator, guard);
    let data: Buffer;
    try {
      const context = { reuploadRequest: socket.updateMediaMessage, logger: logger as never };
      data = maxBytes
        ? await readBounded(await downloadMediaMessage(message, 'stream', { options: network.options } as never, context), maxBytes)
        : ((await downloadMediaMessage(message, 'buffer', { options: network.options } as never, context)) as Buffer);
    } catch (error) {
      if (error instanceof RpcError) throw error;
      throw new RpcError(ErrorCode.BadRequest, `media could not be downloaded: ${(error as Error).message}`);
    }
    const fileId = await files.store(session.instanceId, data, inner.mimetype, inner.fileName, request.ttlMs);
    return { fileId, mimetype: inner.mimetype, fileName: inner.fileName, size: data.length };
  };

  return { 'media.download': downloadMedia };
}

/** Mimetype, file name and declared size (0 when unknown) of the media inside a message (through its envelopes). */
function describeMedia(message: WAMessage): { mimetype: string; fileName: string; fileLength: number } {
  const content = unwrapMessage(message.message as ProtoMessage);
  const inner = (content[contentField(content)] ?? {}) as { mimetype?: string | null; fileName?: string | null; fileLength?: unknown };
  return { mimetype: inner.mimetype || 'application/octet-stream', fileName: inner.fileName || '', fileLength: Number(inner.fileLength ?? 0) || 0 };
}

function tooLarge(maxBytes: number, declared?: number): RpcError {
  return new RpcError(ErrorCode.TooLarge, `the media is larger than ${maxBytes} bytes${declared ? ` (${declared})` : ''}`);
}

/** A stream's bytes, refused (`too_large`, the stream destroyed) once more than `maxBytes` came: never held whole beyond the bound. */
export async function readBounded(stream: AsyncIterable<Uint8Array> & { destroy(error?: Error): void }, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > maxBytes) {
      stream.destroy();
      throw tooLarge(maxBytes);
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks, size);
}
