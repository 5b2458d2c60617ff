import { ErrorCode, RpcError, type HistoryOnDemandRequest } from '@gw/contracts';
import type { InboundMessageObserver } from '../messaging/inbound-message.observer';
import type { OpHandler, OpHandlers, OpRequestParsers } from './op-handler';

/** The `history.*` ops: history on demand from the phone. */
export type HistoryOps = 'history.request';

export const historyRequests = {
  'history.request': (raw, instanceId) => {
    const key = raw.key as Partial<HistoryOnDemandRequest['key']> | null | undefined;
    if (!key?.id || !key.remoteJid || (raw.mode !== 'history' && raw.mode !== 'exact')) throw new RpcError(ErrorCode.BadRequest, 'malformed history request');
    return { instanceId, mode: raw.mode, key: key as HistoryOnDemandRequest['key'], timestampMs: Number(raw.timestampMs), count: Number(raw.count) };
  },
} satisfies OpRequestParsers<HistoryOps>;

/**
 * `inbound` is told, before it is asked, which message an exact reload (`history.request` mode `exact`) asks the
 * phone to resend on this socket: its answer is then announced as `history`, not as a new message.
 */
export function historyOps(inbound: InboundMessageObserver): OpHandlers<HistoryOps> {
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

  return { 'history.request': historyRequest };
}
