import { ErrorCode, RpcError, type InstanceRpc } from '@gw/contracts';
import type { OpHandler, OpHandlers, OpRequestParsers } from './op-handler';

/** The ops of the gateway's `message/` area not in a family of their own: read receipts (`read`, named before families were). */
export type MessageOps = 'read';

type ReadKey = InstanceRpc['read']['request']['keys'][number];

export const messageRequests = {
  read: (raw, instanceId) => {
    const keys = raw.keys ?? [];
    if (!Array.isArray(keys) || keys.length === 0) throw new RpcError(ErrorCode.BadRequest, 'no messages to mark read');
    if (!keys.every(isReadKey)) throw new RpcError(ErrorCode.BadRequest, 'malformed message key');
    return { instanceId, keys };
  },
} satisfies OpRequestParsers<MessageOps>;

function isReadKey(key: unknown): key is ReadKey {
  const candidate = key as Partial<ReadKey> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.remoteJid === 'string' && typeof candidate.id === 'string';
}

export function messageOps(): OpHandlers<MessageOps> {
  const read: OpHandler<'read'> = async (session, request) => {
    await session.openSocket().readMessages(request.keys.map((key) => ({ ...key, fromMe: false })));
    return { ok: true };
  };

  return { read };
}
