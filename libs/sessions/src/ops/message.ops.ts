import { ErrorCode, RpcError, type HistoryOnDemandRequest, type InstanceRpc } from '@gw/contracts';
import { contentField, unwrapMessage, type ProtoMessage } from '@gw/domain';
import type { FileRepository, InstanceRepository } from '@gw/persistence';
import { type Logger, SsrfGuard } from '@gw/platform';
import { BufferJSON, downloadMediaMessage, type WAMessage } from '@whiskeysockets/baileys';
import type { SimulatorSeam } from '../config/session-worker.config';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { MediaSource } from '../outbound/media-source';
import type { SendLedger } from '../outbound/send-ledger';
import { networkOptions } from '../socket/network-options';
import type { OpHandler, OpHandlers, OpRequestParsers } from './op-handler';

/** The ops of the gateway's `message/` area: read receipts, media downloads, history on demand. */
export type MessageOps = 'read' | 'media.download' | 'history.request';

export interface MessageOpsDependencies {
  ledger: SendLedger;
  files: FileRepository;
  instances: InstanceRepository;
  /**
   * Told, before it is asked, which message an exact reload (`history.request` mode `exact`) asks the
   * phone to resend on this socket: its answer is then announced as `history`, not as a new message.
   */
  inbound: InboundMessageObserver;
  logger: Logger;
  /** The simulator seam (its media server is self-signed), when active. */
  simulator?: SimulatorSeam;
  /** Its SSRF guard passes the instance's proxy (without one, no private address does). */
  media?: MediaSource;
}

type ReadKey = InstanceRpc['read']['request']['keys'][number];

const DEFAULT_LINK_TTL_MS = 7 * 86_400_000;

export const messageRequests = {
  read: (raw, instanceId) => {
    const keys = raw.keys ?? [];
    if (!Array.isArray(keys) || keys.length === 0) throw new RpcError(ErrorCode.BadRequest, 'no messages to mark read');
    if (!keys.every(isReadKey)) throw new RpcError(ErrorCode.BadRequest, 'malformed message key');
    return { instanceId, keys };
  },
  'media.download': (raw, instanceId) => ({
    instanceId,
    messageId: String(raw.messageId ?? ''),
    ttlMs: Number(raw.ttlMs) || DEFAULT_LINK_TTL_MS,
    ...(Number(raw.maxBytes) > 0 ? { maxBytes: Number(raw.maxBytes) } : {}),
  }),
  'history.request': (raw, instanceId) => {
    const key = raw.key as Partial<HistoryOnDemandRequest['key']> | null | undefined;
    if (!key?.id || !key.remoteJid || (raw.mode !== 'history' && raw.mode !== 'exact')) throw new RpcError(ErrorCode.BadRequest, 'malformed history request');
    return { instanceId, mode: raw.mode, key: key as HistoryOnDemandRequest['key'], timestampMs: Number(raw.timestampMs), count: Number(raw.count) };
  },
} satisfies OpRequestParsers<MessageOps>;

function isReadKey(key: unknown): key is ReadKey {
  const candidate = key as Partial<ReadKey> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.remoteJid === 'string' && typeof candidate.id === 'string';
}

export function messageOps({ ledger, files, instances, inbound, logger, simulator, media }: MessageOpsDependencies): OpHandlers<MessageOps> {
  const guard = media?.ssrf ?? new SsrfGuard();
  const read: OpHandler<'read'> = async (session, request) => {
    await session.openSocket().readMessages(request.keys.map((key) => ({ ...key, fromMe: false })));
    return { ok: true };
  };

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

  /** History on demand (`history`) or a placeholder resend (`exact`): a peer data operation to the phone. */
  const historyRequest: OpHandler<'history.request'> = async (session, request) => {
    const key = request.key;
    const socket = session.openSocket();
    if (request.mode === 'history') {
      const count = Math.min(Math.max(Math.trunc(Number(request.count) || 1), 1), 100);
      return { requestId: await socket.fetchMessageHistory(count, key, Number(request.timestampMs) || Date.now()) };
    }
    const expected = inbound.handlerFor(request.instanceId, socket)?.expectResend(key.id);
    let requestId: string | undefined;
    try {
      requestId = await socket.requestPlaceholderResend(key);
    } catch (error) {
      expected?.failed();
      throw error;
    }
    expected?.requested(requestId && requestId !== 'RESOLVED' ? requestId : '');
    // 'RESOLVED': the message arrived while the request waited; undefined: the same message was asked already.
    return { requestId: requestId ?? '' };
  };

  return { read, 'media.download': downloadMedia, 'history.request': historyRequest };
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
